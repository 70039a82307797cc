"""Turning whatever a user hands over (a path, bytes, a PIL image, a tensor) into a dataset-like image."""

from __future__ import annotations

import io
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Literal, TypeAlias

import numpy as np
import torch
from PIL import Image, ImageOps, UnidentifiedImageError
from torchvision.transforms.v2 import functional as F

from dragdl.engine.data.files import DEFAULT_PIXEL_LIMIT, IMAGE_EXTENSIONS

ImageInput: TypeAlias = "Image.Image | str | os.PathLike[str] | bytes | bytearray | memoryview | torch.Tensor"

_WIDE_GRAY_MODES = frozenset({"I;16", "I;16B", "I;16L", "I;16N", "I"})

Background: TypeAlias = Literal["dark", "light", "mixed"]
"""The paper of images: dark (light ink on dark, as MNIST), light (dark ink on paper), or mixed
(photos, or a dataset of both kinds: polarity says nothing then)."""

POLARITY_SAMPLE = 512
"""Training images looked at to decide their background (spread evenly over the dataset)."""
_CONSISTENT = 0.9
"""Share of the sampled images that must agree for a dataset to have one background."""


class ImageError(ValueError):
    """An input cannot be used as an image; the message names the file (or the input) concerned."""


def describe_input(image: ImageInput) -> str:
    """A short name for messages and tables."""
    if isinstance(image, str | os.PathLike):
        return str(image)
    if isinstance(image, bytes | bytearray | memoryview):
        return f"<{len(image)} bytes>"
    if isinstance(image, torch.Tensor):
        return f"<tensor {tuple(image.shape)}>"
    return f"<PIL image {image.size[0]}x{image.size[1]}>"


def is_image_file(path: Path) -> bool:
    return path.suffix.lower() in IMAGE_EXTENSIONS and not path.name.startswith(".")


def load_image(
    image: ImageInput, channels: int, size: tuple[int, int] | None, pixel_limit: int = DEFAULT_PIXEL_LIMIT
) -> torch.Tensor:
    """uint8 (channels, H, W), resized to `size` when given: the form the dataset's images had."""
    if isinstance(image, torch.Tensor):
        tensor = _from_tensor(image, channels)
    else:
        if isinstance(image, Image.Image):
            tensor = _from_pil(image, channels)
        else:
            with _open(image, pixel_limit) as img:
                tensor = _from_pil(img, channels, name=describe_input(image))
    if size is not None and tuple(tensor.shape[1:]) != size:
        # Antialiasing keeps thin strokes visible when a large photo shrinks to a small dataset size.
        tensor = F.resize(tensor, list(size), interpolation=F.InterpolationMode.BILINEAR, antialias=True)
    return tensor


def _open(source: str | os.PathLike[str] | bytes | bytearray | memoryview, pixel_limit: int) -> Image.Image:
    name = describe_input(source)
    try:
        if isinstance(source, bytes | bytearray | memoryview):
            img = Image.open(io.BytesIO(bytes(source)))
        else:
            if Path(source).is_dir():
                raise ImageError(f"{name}: is a folder, not an image")
            img = Image.open(source)
    except FileNotFoundError:
        raise ImageError(f"{name}: no such file") from None
    except (Image.DecompressionBombError, UnidentifiedImageError, OSError) as exc:
        raise ImageError(f"{name}: not a readable image ({exc})") from None
    # Checked on the header, before any pixel is decoded; Image.MAX_IMAGE_PIXELS is process-wide.
    width, height = img.size
    if width * height > pixel_limit:
        img.close()
        raise ImageError(f"{name}: {width}x{height} pixels is above the limit of {pixel_limit}")
    return img


def _from_pil(img: Image.Image, channels: int, name: str | None = None) -> torch.Tensor:
    try:
        # Phone photos are stored sideways with an EXIF orientation tag; people expect it applied.
        img = ImageOps.exif_transpose(img)
        array = _to_array(img, channels)
    except (Image.DecompressionBombError, OSError, ValueError, SyntaxError) as exc:
        raise ImageError(f"{name or describe_input(img)}: cannot decode the image ({exc})") from None
    return torch.from_numpy(np.array(array, dtype=np.uint8, order="C"))


def _to_array(img: Image.Image, channels: int) -> np.ndarray:
    if img.mode in _WIDE_GRAY_MODES:
        # As the dataset loaders do: PIL's I;16 -> L clips at 255, so keep the top 8 bits instead.
        wide = np.clip(np.asarray(img, dtype=np.int64), 0, 65535)
        gray = (wide >> 8).astype(np.uint8)[None]
        return gray if channels == 1 else np.repeat(gray, 3, axis=0)
    if img.mode in ("RGBA", "LA", "PA") or (img.mode == "P" and "transparency" in img.info):
        rgba = img.convert("RGBA")
        background = Image.new("RGBA", rgba.size, (255, 255, 255, 255))
        img = Image.alpha_composite(background, rgba)
    if channels == 1:
        return np.asarray(img.convert("L"))[None]
    return np.asarray(img.convert("RGB")).transpose(2, 0, 1)


def _from_tensor(image: torch.Tensor, channels: int) -> torch.Tensor:
    name = describe_input(image)
    if image.dtype != torch.uint8:
        raise ImageError(f"{name}: a tensor image must be uint8 (C, H, W), got {image.dtype}")
    if image.ndim == 2:
        image = image.unsqueeze(0)
    if image.ndim != 3 or image.shape[0] not in (1, 3, 4):
        raise ImageError(f"{name}: a tensor image must be (C, H, W) with 1, 3 or 4 channels")
    if image.shape[0] == channels:
        return image.detach().cpu().contiguous()
    # Other channel counts go through PIL so that tensors and files convert alike.
    array = image.detach().cpu().permute(1, 2, 0).numpy()
    pil = Image.fromarray(array[..., 0] if array.shape[2] == 1 else array)
    return _from_pil(pil, channels, name=name)


def border_brightness(image: torch.Tensor) -> float:
    """Mean of the outer frame (a tenth of the smaller side, at least one pixel) of a uint8
    (C, H, W) image, 0..255: the paper, where a drawing or a scanned digit has no ink."""
    height, width = image.shape[-2:]
    ring = max(1, min(height, width) // 10)
    inside = torch.zeros((height, width), dtype=torch.bool)
    inside[ring : height - ring, ring : width - ring] = True
    frame = image[..., ~inside]
    return float(frame.float().mean()) if frame.numel() else float(image.float().mean())


def background_of(image: torch.Tensor) -> Literal["dark", "light"]:
    """The paper of one uint8 (C, H, W) image, from its border."""
    return "dark" if border_brightness(image) < 128 else "light"


def dataset_background(images: Iterable[torch.Tensor]) -> Background:
    """The paper most images share, or "mixed" when fewer than 90% of them agree."""
    dark = total = 0
    for image in images:
        total += 1
        dark += background_of(image) == "dark"
    if total == 0:
        return "mixed"
    if dark >= _CONSISTENT * total:
        return "dark"
    if total - dark >= _CONSISTENT * total:
        return "light"
    return "mixed"


def needs_inversion(image: torch.Tensor, background: Background | None) -> bool:
    """True when a uint8 (C, H, W) image has the opposite paper of the training images: a digit
    written in dark ink on white for a model that learned light strokes on black, say. Never for
    "mixed" or unknown (older bundles) training backgrounds."""
    if background not in ("dark", "light"):
        return False
    return background_of(image) != background


def invert(image: torch.Tensor) -> torch.Tensor:
    """255 - each value of a uint8 image."""
    return 255 - image
