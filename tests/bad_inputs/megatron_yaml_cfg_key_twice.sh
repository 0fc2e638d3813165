# A --yaml-cfg file that gives num_layers twice: read as the first (32) while Megatron's PyYAML keeps
# the last (16), exit 0 (session 34).
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg megatron_yaml_cfg_key_twice.yaml
