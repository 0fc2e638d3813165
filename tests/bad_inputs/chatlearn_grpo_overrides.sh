#!/bin/bash
python entrypoint.py grpo --config-file grpo.yaml runtime_args.train_global_batch_size=512 models.policy_trainer.num_gpu=8
