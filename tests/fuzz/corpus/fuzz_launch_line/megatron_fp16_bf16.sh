torchrun --nproc_per_node 8 --nnodes 1 pretrain_gpt.py \
  --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 \
  --micro-batch-size 1 --fp16 --bf16
