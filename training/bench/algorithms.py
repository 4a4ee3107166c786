"""placeholder"""
ALGORITHMS = {}
