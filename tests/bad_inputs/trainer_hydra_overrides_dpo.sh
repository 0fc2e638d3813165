#!/bin/bash
# A trainer configured by key=value overrides (Hydra), its loss DPO: no flags to read.
python -u train.py model=pythia28 datasets=[hh] loss=dpo loss.beta=0.1 batch_size=64 trainer=FSDPTrainer
