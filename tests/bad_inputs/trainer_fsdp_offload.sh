#!/bin/bash
torchrun --nproc_per_node 8 train.py --model_name_or_path m --per_device_train_batch_size 2 --fsdp "full_shard auto_wrap offload"
