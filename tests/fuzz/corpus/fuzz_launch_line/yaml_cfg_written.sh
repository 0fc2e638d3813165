cat > cfg.yaml <<EOT
language_model:
  num_layers: 32
  hidden_size: 4096
  num_attention_heads: 32
  activation_func: swiglu
model_parallel:
  tensor_model_parallel_size: 2
  pipeline_model_parallel_size: 2
  virtual_pipeline_model_parallel_size: 2
  bf16: true
micro_batch_size: 1
global_batch_size: 64
seq_length: 2048
EOT
torchrun --nproc_per_node 8 pretrain_gpt.py --yaml-cfg cfg.yaml --lr 1e-4
