deepspeed pretrain_gpt.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 65536 \
  --micro-batch-size 1 --global-batch-size 8 --ds-sequence-parallel-size 4 --ds-sequence-parallel-fpdt --deepspeed
