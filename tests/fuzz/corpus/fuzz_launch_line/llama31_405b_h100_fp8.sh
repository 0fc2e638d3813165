# Megatron-Bridge's Llama 3.1 405B FP8 performance recipe on 1024 H100 (scripts/performance: TP 8, PP 8,
# CP 2, VP 8, GBS 512, MBS 1; the 405B recipe's account_for_embedding/loss_in_pipeline_split, sequence
# parallelism, TP communication overlap, distributed optimizer with overlapped reduce and gather),
# written as the Megatron-LM flags those settings are.
torchrun --nproc_per_node 8 --nnodes 128 pretrain_gpt.py \
    --use-mcore-models --num-layers 126 --hidden-size 16384 --ffn-hidden-size 53248 \
    --num-attention-heads 128 --group-query-attention --num-query-groups 8 --kv-channels 128 \
    --seq-length 8192 --max-position-embeddings 8192 --position-embedding-type rope --swiglu \
    --untie-embeddings-and-output-weights --disable-bias-linear --vocab-size 128256 \
    --micro-batch-size 1 --global-batch-size 512 --bf16 --fp8-format hybrid \
    --tensor-model-parallel-size 8 --pipeline-model-parallel-size 8 --context-parallel-size 2 \
    --num-layers-per-virtual-pipeline-stage 2 \
    --account-for-embedding-in-pipeline-split --account-for-loss-in-pipeline-split \
    --sequence-parallel --tp-comm-overlap \
    --use-distributed-optimizer --overlap-grad-reduce --overlap-param-gather \
    --attention-backend fused --cross-entropy-loss-fusion --manual-gc \
    --mock-data --tokenizer-type NullTokenizer
