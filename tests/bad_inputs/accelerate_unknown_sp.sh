# Accelerate's sequence parallelism under FSDP (not DeepSpeed's Ulysses): not read.
cat > acc.yaml <<EOT
distributed_type: FSDP
fsdp_config:
  fsdp_version: 2
mixed_precision: bf16
num_machines: 1
num_processes: 8
parallelism_config:
  parallelism_config_sp_size: 2
  parallelism_config_sp_backend: torch
EOT
accelerate launch --config_file acc.yaml train.py --model_name_or_path meta-llama/Llama-2-7b-hf --per_device_train_batch_size 2
