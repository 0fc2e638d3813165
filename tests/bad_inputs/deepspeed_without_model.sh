deepspeed --num_gpus 8 train.py --deepspeed_config ds_config.json --model_name_or_path gpt2
