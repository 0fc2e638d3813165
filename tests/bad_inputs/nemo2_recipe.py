# A NeMo 2 recipe: Python that builds a nemo_run config.
import nemo_run as run
from nemo.collections import llm


@run.cli.factory(name="my_llama")
def pretrain_recipe(num_nodes: int = 1) -> run.Partial:
    return run.Partial(llm.pretrain, model=llm.llama3_8b.model())
