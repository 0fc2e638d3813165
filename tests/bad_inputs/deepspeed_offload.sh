DS_CONFIG=ds_config.json
cat <<EOT > $DS_CONFIG
{"train_micro_batch_size_per_gpu": 1, "zero_optimization": {"stage": 3, "offload_optimizer": {"device": "cpu"}}}
EOT
deepspeed pretrain_gpt.py --num-layers 24 --hidden-size 1024 --num-attention-heads 16 --seq-length 1024 \
  --micro-batch-size 1 --bf16 --no-pipeline-parallel --deepspeed --deepspeed_config $DS_CONFIG
