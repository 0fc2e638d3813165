#!/bin/bash
# RLHF with PPO from its own flags (as DeepSpeed-Chat's step3 run_13b.sh: an actor and a critic trained).
deepspeed --num_gpus 8 main.py \
   --actor_model_name_or_path facebook/opt-13b \
   --critic_model_name_or_path facebook/opt-350m \
   --per_device_generation_batch_size 4 \
   --per_device_training_batch_size 4 \
   --actor_zero_stage 3 \
   --critic_zero_stage 3 \
   --deepspeed
