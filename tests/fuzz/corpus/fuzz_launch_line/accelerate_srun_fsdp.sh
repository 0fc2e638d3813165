cat > acc.yaml <<EOT
distributed_type: FSDP
fsdp_config:
  fsdp_sharding_strategy: SHARD_GRAD_OP
mixed_precision: bf16
num_machines: 2
num_processes: 16
EOT
srun --nodes 2 accelerate launch --config_file acc.yaml train.py --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 --micro-batch-size 1 --global-batch-size 32
