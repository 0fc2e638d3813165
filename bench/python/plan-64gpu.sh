# The benchmark's 64-GPU plan (bench/python/python_run.py): a GPT 1.3B-like model, TP 2 x PP 4 x DP 8 on
# 8 DGX A100 nodes. plan-64gpu.pbtxt is `hetsim import megatron bench/python/plan-64gpu.sh --cluster
# examples/cluster-a100-512.pbtxt --out bench/python/plan-64gpu.pbtxt`.
torchrun --nproc_per_node 8 --nnodes 8 pretrain_gpt.py \
    --num-layers 24 --hidden-size 2048 --num-attention-heads 16 --seq-length 2048 \
    --max-position-embeddings 2048 --micro-batch-size 2 --global-batch-size 256 \
    --tensor-model-parallel-size 2 --pipeline-model-parallel-size 4 \
    --bf16 --use-distributed-optimizer --overlap-grad-reduce --vocab-size 50257
