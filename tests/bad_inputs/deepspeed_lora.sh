#!/bin/bash
# A DeepSpeed run whose config carries the training script's LoRA section (as eth-easl/fmengine's llama_lora.json).
deepspeed --num_gpus 1 --num_nodes 1 train.py --max_seq_len 2048 --deepspeed_config deepspeed_lora.json
