# An Accelerate config that gives distributed_type twice: read as the first (FSDP) while Accelerate's
# PyYAML keeps the last (NO), exit 0 (session 34).
cat > acc.yaml <<EOT
distributed_type: FSDP
num_processes: 8
distributed_type: NO
EOT
accelerate launch --config_file acc.yaml train.py --per_device_train_batch_size 2
