# --yaml-cfg names a file that is not beside the script: Megatron reads every argument from it.
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg no_such_config.yaml
