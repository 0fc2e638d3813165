#!/bin/bash
# DeepSpeed's runner with neither --num_gpus nor a host list (as DeepSpeed-Chat's training_scripts/): /job/hostfile's
# hosts when that file exists, else the local GPUs; the line cannot say which.
deepspeed main.py \
   --model_name_or_path meta-llama/Llama-2-7b-hf \
   --per_device_train_batch_size 4 \
   --zero_stage 3 \
   --deepspeed
