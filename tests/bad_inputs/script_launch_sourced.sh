#!/bin/bash
# As Megatron-LM's SC'21 scripts do: the launch is in another file.
MODEL_SIZE=175
. ./CONFIG.sh
. ./SRUN.sh
