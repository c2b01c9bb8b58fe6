"""SFT and GRPO on TRL whose checkpoints come back into Podium.

- `trainers.config`   run-card models (`SftConfig`, `GrpoConfig`, `RewardSpec`) + presets
- `trainers.data`     Iceberg snapshot -> conversations -> HF datasets
- `trainers.sft`      `kind: sft` (TRL SFTTrainer; full or LoRA merged)
- `trainers.grpo`     `kind: grpo` (TRL GRPOTrainer; transformers on CPU, vLLM colocated on GPU)
- `trainers.lifecycle` what both kinds do around TRL: input checks, writer + callback, outputs
- `trainers.rewards`  rewards from validation rules, the sandbox, exact match, length
- `trainers.callbacks` metrics, samples, cancel and periodic saves into the Reporter
- `trainers.checkpoints` atomic save + registration with lineage

Importing this package changes nothing in the environment: the training run sets what it
needs itself (`trainers.runtime.prepare_env`), so an app or CLI that imports `trainers`
starts vLLM servers without training-only settings.
"""
