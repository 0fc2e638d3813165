export NVTE_FLASH_ATTN=0 NVTE_FUSED_ATTN=0
NVTE_MASKED_SOFTMAX_FUSION=0 torchrun --nproc_per_node 2 --nnodes 1 pretrain_gpt.py --num-layers 2 --hidden-size 256 --num-attention-heads 8 --seq-length 512 --max-position-embeddings 512 --micro-batch-size 2 --global-batch-size 16 --bf16 --qk-layernorm --attention-backend unfused
