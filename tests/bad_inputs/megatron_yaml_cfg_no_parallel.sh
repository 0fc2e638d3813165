# A --yaml-cfg file without its model_parallel section: yaml-cpp threw on the missing node's type and the
# message read "megatron_yaml_cfg_no_parallel.yaml:0:0: not YAML: invalid node" (session 34).
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg megatron_yaml_cfg_no_parallel.yaml
