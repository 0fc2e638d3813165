#!/bin/bash
deepspeed main.py --lm_model_name_or_path meta-llama/Llama-2-7b --vision_model_name_or_path openai/clip-vit-large-patch14 --per_device_train_batch_size 1 --zero_stage 3 --deepspeed
