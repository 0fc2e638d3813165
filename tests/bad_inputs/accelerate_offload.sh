# An Accelerate DeepSpeed config that offloads the optimizer to the CPU: not modelled.
cat > acc.yaml <<EOT
distributed_type: DEEPSPEED
deepspeed_config:
  offload_optimizer_device: cpu
  zero_stage: 3
num_processes: 8
EOT
accelerate launch --config_file acc.yaml train.py --per_device_train_batch_size 4
