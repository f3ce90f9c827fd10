"""The `/triage` question: why is this accelerator pod not running?"""
