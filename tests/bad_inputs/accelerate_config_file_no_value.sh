# `--config_file` with no file before the script: imported as a plain run with no note (session 34);
# Accelerate's argparse would take train.py as the config.
accelerate launch --config_file train.py --per_device_train_batch_size 2
