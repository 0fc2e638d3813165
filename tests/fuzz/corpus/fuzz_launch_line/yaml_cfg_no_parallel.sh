cat > cfg.yaml <<EOT
language_model:
  num_layers: 32
  hidden_size: 4096
EOT
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg cfg.yaml
