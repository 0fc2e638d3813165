torchrun --nproc_per_node 8 pretrain_hybrid.py --num-layers 24 --tensor-model-parallel-size
