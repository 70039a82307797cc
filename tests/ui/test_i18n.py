"""Chinese all the way: every visible text of the editor, monitor, task center and prediction pages.

A first-time user switched to 中文 and still met English node names, parameter labels, port names,
validation messages and task texts. This test opens each page in Chinese (the editor with a
template graph holding a mistake on purpose, the property forms of several node types, the
palette; a finished task's curves, results, log and settings; the task center; a prediction) and
collects every visible text and title/aria-label/placeholder attribute. It fails on any Latin word
outside a short list of proper names and units. Content the user typed or that names files
(node ids, log lines, file names) is marked `translate="no"` in the UI and left out, as a
translator would leave it.

Screenshots: docs/screenshots/zh-editor.png, zh-monitor.png, zh-predict.png.
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from .test_monitor_predict import api, digit_png, digits_graph

pytestmark = pytest.mark.ui

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "docs" / "screenshots"
VIEWPORT = {"width": 1440, "height": 900}
TRAIN_TIMEOUT_S = 240

PROPER_NAMES = {
    # the product, libraries and formats
    "DragDL", "PyTorch", "ONNX", "Runtime", "Web", "TorchScript", "CSV", "JSON", "PNG", "JPEG", "BMP",
    "GIF", "WebP", "TIFF", "NumPy", "npy", "zip", "safetensors", "timm", "torchvision", "ImageNet",
    "UCR", "UEA", "ts",
    "Quick", "Draw", "Google", "MNIST", "Fashion", "CIFAR", "Ray", "NCCL", "gloo",
    # layer, optimizer and model names
    "Conv2d", "MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d", "BatchNorm1d", "BatchNorm2d", "Dropout",
    "ReLU", "LeakyReLU", "GELU", "Sigmoid", "Tanh", "Linear", "SGD", "Adam", "AdamW", "AMP",
    "Conv1d", "MaxPool1d", "AvgPool1d", "RNN", "LSTM", "GRU", "PointNet", "Net",  # T-Net
    "EfficientNet", "Lite0", "ResNet", "VGG", "MobileNet", "MobileNetV3", "DenseNet",
    # units and hardware
    "GPU", "CPU", "CUDA", "RGB", "MiB", "GiB", "KiB", "TiB", "ms", "px", "fp16", "fp32", "bf16", "ID",
    # the formula language's function names (a formula is code)
    "clamp", "abs", "sqrt", "exp", "log", "where", "minimum", "maximum", "mean", "std", "hflip", "vflip",
    "Ctrl", "Shift", "Enter", "B0", "L2", "F1", "Python", "WebAssembly",
    # the language switch names English in English
    "EN",
}  # fmt: skip

LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z0-9]*")

# Visible text nodes and labelling attributes, minus what is marked translate="no".
COLLECT_JS = """
() => {
  const out = [];
  // translate="no": user data and identifiers; React Flow's credit link names the library.
  const skip = (el) => el.closest('[translate="no"], .react-flow__attribution') !== null;
  const visible = (el) => el.checkVisibility ? el.checkVisibility() : el.offsetParent !== null;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    const el = node.parentElement;
    const text = node.textContent.trim();
    if (!text || !el || skip(el) || !visible(el)) continue;
    if (['SCRIPT', 'STYLE', 'NOSCRIPT'].includes(el.tagName)) continue;
    out.push(text);
  }
  for (const el of document.querySelectorAll('[title], [aria-label], [placeholder]')) {
    if (skip(el) || !visible(el)) continue;
    for (const name of ['title', 'aria-label', 'placeholder']) {
      const value = el.getAttribute(name);
      if (value) out.push(value);
    }
  }
  return out;
}
"""


def english_words(page: Any, user_data: tuple[str, ...] = ()) -> list[str]:
    """Latin words left in the page's texts; `user_data` (names users gave, e.g. in "删除: my task")
    is taken out of each text first, as the UI marks it `translate="no"` where it stands alone."""
    texts: list[str] = page.evaluate(COLLECT_JS)
    found = []
    for text in texts:
        for name in sorted(user_data, key=len, reverse=True):
            text = text.replace(name, "")
        words = [word for word in LATIN_WORD.findall(text) if word not in PROPER_NAMES and len(word) > 1]
        if words:
            found.append(f"{text!r} -> {words}")
    return sorted(set(found))


def assert_chinese(page: Any, where: str, user_data: tuple[str, ...] = ()) -> None:
    words = english_words(page, user_data)
    assert not words, f"English left in {where}:\n" + "\n".join(words)


def wait_task(base: str, task_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + TRAIN_TIMEOUT_S
    while True:
        task = api(base, "GET", f"/api/tasks/{task_id}")
        if task["status"] in ("SUCCEEDED", "FAILED", "STOPPED"):
            assert task["status"] == "SUCCEEDED", task["error"]
            return task
        assert time.monotonic() < deadline, "training did not finish in time"
        time.sleep(0.2)


def draft_with_a_mistake() -> dict[str, Any]:
    graph = digits_graph()
    graph["name"] = "手写数字"
    train = next(node for node in graph["nodes"] if node["id"] == "train")
    train["params"]["epochs"] = 0  # the mistake: "训练轮数不能小于 1"
    train["params"]["optimizer"] = "sgd"
    return graph


def test_every_visible_text_is_chinese(browser: Any, server_url: str, tmp_path: Path) -> None:
    graph = digits_graph()
    graph["nodes"][-1]["params"]["epochs"] = 1
    task = api(server_url, "POST", "/api/tasks", {"graph": graph, "name": "数字识别"})
    context = browser.new_context(viewport=VIEWPORT, base_url=server_url, locale="zh-CN")
    draft = json.dumps(draft_with_a_mistake())
    context.add_init_script(
        "localStorage.setItem('dragdl.language', 'zh');"
        "if (!localStorage.getItem('dragdl.editor.draft'))"
        f" localStorage.setItem('dragdl.editor.draft', {draft!r});"
    )
    page = context.new_page()
    page.set_default_timeout(30_000)
    try:
        # --- editor: palette, a validation error, property forms of several node types -------------
        page.goto("/")
        page.locator('.dnode[data-kind="train.Classifier"]').wait_for()
        page.locator('.dnode[data-kind="train.Classifier"][data-errors="1"]').wait_for()
        for kind in ("dataset.builtin", "op.Normalize", "layer.Conv2d", "train.Classifier"):
            page.locator(f'.dnode[data-kind="{kind}"] .dnode__title').click()
            page.locator(".props__node").wait_for()
            assert_chinese(page, f"the editor with {kind} selected")
        # The mistake is told in Chinese, naming the field by its title; SGD shows its momentum.
        assert "训练轮数不能小于 1" in page.locator(".field.has-error .field__error").inner_text()
        assert page.locator('.field[data-field="momentum"]').count() == 1
        if page.locator(".problems__list").count() == 0:
            page.locator(".problems__toggle").click()
        page.locator(".problems__list li").first.wait_for()
        assert_chinese(page, "the problems list")
        page.screenshot(path=SCREENSHOTS / "zh-editor.png")

        # --- monitor: curves, results, graph, settings, log header ----------------------------------
        wait_task(server_url, task["id"])
        page.goto(f"/tasks/{task['id']}")
        page.locator(".live[data-connection='ended']").wait_for()
        page.wait_for_function(
            "() => document.querySelector('[data-chart=\"loss\"] .echart').dataset.points > 0"
        )
        assert_chinese(page, "the monitor's curves")
        page.screenshot(path=SCREENSHOTS / "zh-monitor.png")
        for tab, panel in (("结果", "results"), ("设置", "config"), ("日志", "log")):
            page.get_by_role("tab", name=tab).click()
            page.locator(f"#panel-{panel}").wait_for()
            assert_chinese(page, f"the monitor's {tab} tab")

        # --- task center ------------------------------------------------------------------------------
        page.goto("/tasks")
        page.locator(f'tr[data-task="{task["id"]}"]').wait_for()
        # Other browser tests share this server: their tasks' names are user data, not UI text.
        names = tuple(row["name"] for row in api(server_url, "GET", "/api/tasks?limit=100")["data"])
        assert_chinese(page, "the task center", names)

        # --- prediction -------------------------------------------------------------------------------
        models = api(server_url, "GET", "/api/models")["data"]
        model = next(m for m in models if m["task_id"] == task["id"])
        page.goto(f"/models/{model['id']}")
        page.locator(".predict").wait_for()
        digit_png(tmp_path / "digit.png", 7)
        page.set_input_files('input[data-input="images"]', str(tmp_path / "digit.png"))
        page.locator('.prediction[data-input="digit.png"] [data-chart="pie"] canvas').first.wait_for()
        assert_chinese(page, "the prediction page")
        page.screenshot(path=SCREENSHOTS / "zh-predict.png")
    finally:
        context.close()
