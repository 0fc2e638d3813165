if grep -q foo /etc/passwd; then TP=8; else TP=4; fi
torchrun --nproc_per_node 8 --nnodes 64 pretrain_gpt.py --num-layers 48 --hidden-size 8192 --num-attention-heads 64 --seq-length 2048 --max-position-embeddings 2048 --micro-batch-size 4 --global-batch-size 1536 --tensor-model-parallel-size $TP --pipeline-model-parallel-size 2 --fp16
