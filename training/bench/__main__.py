from .cli import main

if __name__ == "__main__":  # spawned tournament workers re-import this module
    main()
