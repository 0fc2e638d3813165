# A trainer's own model-parallel flag (not Megatron's): its layout is not read, so the line is refused.
deepspeed --num_gpus 8 train.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 \
  --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 64 --pipe_parallel_size 2
