# Narayanan et al. SC'21, Table 1, GPT 39.1B: 48 layers, hidden 8192, 64 heads, TP 8, PP 2, 512 A100,
# batch 1536, micro-batch 4 (as validation/plans/ runs it), full activation recomputation
# (--checkpoint-activations, the flag of 2021).
torchrun --nproc_per_node 8 --nnodes 64 pretrain_gpt.py \
    --num-layers 48 --hidden-size 8192 --num-attention-heads 64 \
    --seq-length 2048 --max-position-embeddings 2048 \
    --micro-batch-size 4 --global-batch-size 1536 \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 2 \
    --checkpoint-activations \
    --fp16 --vocab-file gpt2-vocab.json --merge-file gpt2-merges.txt
