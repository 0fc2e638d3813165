#!/bin/bash
# Megatron's tasks/main.py (GLUE fine-tuning) under DeepSpeed's launcher: --task says it is Megatron's, not
# DeepSpeed-Chat's main.py.
deepspeed ../../tasks/main.py --task MNLI --num-layers 4 --hidden-size 256 --num-attention-heads 4 \
  --seq-length 128 --max-position-embeddings 512 --micro-batch-size 8 --global-batch-size 64 \
  --tokenizer-type BertWordPieceLowerCase --fp16 --deepspeed
