"""A pygame window showing board images (``render_mode="human"``, PettingZoo classic's way).

pygame is optional (the ``human`` extra: ``pip install 'sorry-env[human]'``); it is imported
and its display opened only when the first picture is shown. Headless machines and tests set
``SDL_VIDEODRIVER=dummy`` to draw to no screen.
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np


def require_pygame() -> None:
    """A clear error, before any work, when pygame is missing."""
    if importlib.util.find_spec("pygame") is None:
        raise ImportError(
            "render_mode='human' needs pygame, which is not installed: "
            "pip install 'sorry-env[human]' (or pip install pygame), or use render_mode='rgb_array'"
        )


class Window:
    """One window, sized to the first image; ``show`` draws an image and keeps the window alive."""

    def __init__(self, title: str, fps: float):
        require_pygame()
        import pygame

        self.pygame, self.title, self.fps = pygame, title, fps
        self.screen: Any = None  # the pygame display surface, opened at the first show
        self.clock = pygame.time.Clock()

    def show(self, image: np.ndarray) -> None:
        pygame = self.pygame
        height, width = image.shape[:2]
        if self.screen is None:
            pygame.display.init()
            pygame.display.set_caption(self.title)
            self.screen = pygame.display.set_mode((width, height))
        surface = pygame.image.frombuffer(np.ascontiguousarray(image).tobytes(), (width, height), "RGB")
        self.screen.blit(surface, (0, 0))
        pygame.event.pump()  # keeps the window responsive (and closable) between steps
        pygame.display.update()
        self.clock.tick(self.fps)

    def close(self) -> None:
        if self.screen is not None:
            self.pygame.display.quit()
            self.screen = None
