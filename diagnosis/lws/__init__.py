"""`kubewhy lws why`: why is this LeaderWorkerSet not serving?"""
