# Production values.
research_gpus = "eight"
