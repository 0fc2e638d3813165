# examples/mixtral/train_mixtral_8x7b_distributed.sh: GPUS_PER_NODE=2, 1 node, its small smoke model
torchrun --nproc_per_node 2 --nnodes 1 --node_rank 0 --master_addr localhost --master_port 6000 pretrain_gpt.py \
    --use-mcore-models --disable-bias-linear --seq-length 256 --max-position-embeddings 2048 \
    --num-layers 2 --hidden-size 256 --ffn-hidden-size 896 --num-attention-heads 2 \
    --init-method-std 0.01 --attention-dropout 0.0 --hidden-dropout 0.0 --normalization RMSNorm \
    --position-embedding-type rope --swiglu --untie-embeddings-and-output-weights \
    --group-query-attention --num-query-groups 2 --no-masked-softmax-fusion --no-position-embedding \
    --rotary-base 1000000 \
    --num-experts 2 --moe-router-topk 2 --moe-router-load-balancing-type aux_loss --moe-aux-loss-coeff 1e-2 \
    --moe-token-dispatcher-type alltoall --overlap-param-gather --overlap-grad-reduce \
    --tokenizer-type Llama2Tokenizer --tokenizer-model /workspace/Megatron-LM/tokenizer.model --mock-data \
    --split 99990,8,2 \
    --micro-batch-size 1 --global-batch-size 4 --lr 1e-4 --train-iters 7 --min-lr 1.0e-5 \
    --weight-decay 0.1 --clip-grad 1.0 \
    --tensor-model-parallel-size 1 --pipeline-model-parallel-size 1 --expert-model-parallel-size 2 \
    --use-distributed-optimizer --sequence-parallel \
    --eval-iters 10 --no-load-optim --no-load-rng
