#!/bin/bash
# A DeepSpeed script training LoRA adapters from its own flag (as DeepSpeed-Chat's step1 run_13b.sh: --lora_dim 128).
deepspeed main.py \
   --model_name_or_path facebook/opt-13b \
   --per_device_train_batch_size 4 \
   --zero_stage 3 \
   --lora_dim 128 \
   --deepspeed
