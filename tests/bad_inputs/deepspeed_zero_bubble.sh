deepspeed pretrain_gpt.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 \
  --micro-batch-size 1 --pipeline-model-parallel-size 2 --enable-zbh1-pipeline --deepspeed
