python3 /opt/NeMo-Framework-Launcher/launcher_scripts/main.py \
  training=gpt3/5b \
  stages=[training] \
  training.trainer.num_nodes=2
