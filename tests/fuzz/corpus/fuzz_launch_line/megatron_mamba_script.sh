torchrun --nproc_per_node 8 pretrain_mamba.py --num-layers 4 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 --micro-batch-size 1
