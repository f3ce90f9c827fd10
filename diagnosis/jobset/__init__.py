"""The `/jobset why` question: why is this JobSet stuck or restarting?"""
