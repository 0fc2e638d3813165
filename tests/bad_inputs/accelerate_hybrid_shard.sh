# An Accelerate FSDP config with HYBRID_SHARD (shards within a node, replicas across): not modelled.
cat > acc.yaml <<EOT
distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: HYBRID_SHARD
mixed_precision: bf16
num_machines: 2
num_processes: 16
EOT
accelerate launch --config_file acc.yaml train.py --model_name_or_path meta-llama/Llama-2-7b-hf
