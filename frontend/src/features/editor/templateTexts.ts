// The shipped templates' names and descriptions in Chinese, by template id. The server sends them in
// English (from src/dragdl/examples), which is also the fallback for a template without an entry here.
import type { GraphSpec } from '../../api/types';

export const templateTextsZh: Record<string, { name: string; description: string }> = {
  augmented_cnn: {
    name: '带数据增强的数字卷积网络',
    description: '只对训练图像做随机仿射变形和擦除（评估看原图），批归一化、全局平均池化，AdamW 优化器配单周期学习率。',
  },
  cnn1d_waves: {
    name: '一维卷积分类器（波形）',
    description:
      '全卷积网络分类带噪声的正弦波、方波和锯齿波（64 步）：两个 Conv1d 块、沿时间的全局平均池化、一个 Linear 层。',
  },
  linear_regression_diabetes: {
    name: '线性回归（糖尿病）',
    description:
      '在 scikit-learn 的糖尿病表格上对病情进展做最小二乘线性回归：标准化特征、一个 Linear 层、均方误差损失。',
  },
  logistic_regression_iris: {
    name: '逻辑回归（鸢尾花）',
    description: '在 scikit-learn 的鸢尾花数据上做多分类逻辑回归：标准化的测量值、一个 Linear 层、交叉熵损失。',
  },
  logistic_regression_wine: {
    name: '逻辑回归（葡萄酒）',
    description: '在 scikit-learn 的葡萄酒品种数据上做多分类逻辑回归：13 项标准化的化学测量值、一个 Linear 层。',
  },
  lstm_seq_mnist: {
    name: 'LSTM 分类器（序列 MNIST）',
    description:
      '把离线 MNIST 5k 子集的每个 28x28 数字逐行读成 28 步、每步 28 个特征：标准化特征、128 个单元的 LSTM、取最后一步、一个 Linear 层。',
  },
  mlp_breast_cancer: {
    name: '多层感知机（乳腺癌）',
    description: '在 scikit-learn 的乳腺癌表格上训练的小型多层感知机：30 个标准化特征、64 个隐藏单元、Dropout。',
  },
  mlp_regression_diabetes: {
    name: '多层感知机回归（糖尿病）',
    description: '在 scikit-learn 的糖尿病表格上预测病情进展的小型多层感知机，使用均方误差损失。',
  },
  pointnet_shapes: {
    name: 'PointNet 分类器（合成形状）',
    description:
      '在合成的三维形状（球体、立方体、圆柱、圆锥、圆环、棱锥）上训练 PointNet：每个点云 256 个点（任意大小的文件都会采样到 256 个点）并缩放到单位球内，训练时随机旋转、缩放和抖动，一个输入 T-Net、逐点共享的多层感知机、对所有点的全局最大池化，以及两个 Linear 层。',
  },
  residual_cnn: {
    name: '残差卷积网络',
    description: '一个小型残差网络：两个残差块，各自的加法节点把块的输出与输入相加（跳跃连接）。',
  },
  sequence_regressor_waves_frequency: {
    name: '序列回归（波形频率）',
    description:
      '预测带噪声波形（64 步）的频率，取值 1 到 6：标准化特征，两个 Conv1d 层识别一个周期的形状，32 个单元的 GRU 数周期，取最后一步，一个 Linear 输出，均方误差损失。',
  },
  sketcher_cnn: {
    name: '涂鸦识别卷积网络',
    description: 'Quick Draw 涂鸦识别器的网络（三个 3x3 卷积块、一个 128 单元的全连接层），使用离线的 MNIST 5k 子集。',
  },
  transfer_efficientnet_lite0_digits: {
    name: '迁移学习：EfficientNet-Lite0 识别数字',
    description:
      '离线迁移学习：8x8 的数字图像放大到 64x64 后送入带 ImageNet 权重的 EfficientNet-Lite0，主干冻结，只训练新的输出头。主干冻结且没有随机算子时，DragDL 只计算一次主干特征（缓存供以后使用），再用它训练输出头，因此在 CPU 上二十轮只需几秒。',
  },
  transfer_efficientnet_lite0_digits_finetune: {
    name: '迁移学习：微调 EfficientNet-Lite0 识别数字',
    description:
      '离线微调：8x8 的数字图像放大到 64x64 后送入从 ImageNet 权重开始的 EfficientNet-Lite0，整个网络都参与学习：新的输出头用设定的学习率，预训练主干用它的一半，使特征得到调整而不被覆盖。在 CPU 上三轮需要几分钟。',
  },
};

type Translate = (key: string, options: { defaultValue: string }) => string;

/**
 * A template's graph as it opens in the editor: named and described in the reader's language (the
 * Chinese editor showed a translated name above the English description).
 */
export function localizedTemplate(
  template: { id: string; name: string; description: string; graph: GraphSpec },
  t: Translate,
): GraphSpec {
  return {
    ...template.graph,
    name: t(`templateText.${template.id}.name`, { defaultValue: template.name }),
    description: t(`templateText.${template.id}.description`, { defaultValue: template.description }),
  };
}
