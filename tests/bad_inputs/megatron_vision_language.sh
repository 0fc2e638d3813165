torchrun --nproc_per_node 8 --nnodes 1 examples/multimodal/train.py \
  --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 \
  --micro-batch-size 1 --global-batch-size 8 --bf16 --img-h 336 --img-w 336 --patch-dim 14
