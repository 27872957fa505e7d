research_gpus = [4]
