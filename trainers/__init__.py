"""SFT and GRPO on TRL whose checkpoints come back into Podium.

- `trainers.config`   run-card models (`SftConfig`, `GrpoConfig`, `RewardSpec`) + presets
- `trainers.data`     Iceberg snapshot -> conversations -> HF datasets
- `trainers.sft`      `kind: sft` (TRL SFTTrainer; full or LoRA merged)
- `trainers.grpo`     `kind: grpo` (TRL GRPOTrainer; transformers on CPU, vLLM colocated on GPU)
- `trainers.rewards`  rewards from validation rules, the sandbox, exact match, length
- `trainers.callbacks` metrics, samples, cancel and periodic saves into the Reporter
- `trainers.checkpoints` atomic save + registration with lineage
"""

import os

# Read by OpenMP when torch first loads: a job process imports `trainers` before torch.
# PASSIVE keeps idle OpenMP threads from spinning on a busy 2-core machine (FACTS.md).
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
