# --yaml-cfg with no file after it: read as if absent, then refused for --num-layers (session 34).
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg
