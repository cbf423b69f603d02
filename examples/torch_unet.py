"""A small UNet trained with torch's own backward and with bpg_torch.convert.

    PYTHONPATH=build/python python3 examples/torch_unet.py [--steps N] [--batch N]
        [--size N] [--width N] [--channels-last]

Prints the median time of a training step (forward, backward, SGD update) for
the plain model and the converted one, and the largest difference between
their gradients on the same batch. tests/python imports the model from here.
"""
import argparse
import copy
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


def conv_bn_relu(in_channels, out_channels):
    return nn.Sequential(
        nn.Conv2d(in_channels, out_channels, 3, padding=1, bias=False),
        nn.BatchNorm2d(out_channels),
        nn.ReLU(inplace=True))


class UNet(nn.Module):
    """Two downsamplings, two upsamplings (bilinear and nearest), skip connections."""

    def __init__(self, in_channels=3, width=8):
        super().__init__()
        self.enc1 = conv_bn_relu(in_channels, width)
        self.enc2 = conv_bn_relu(width, 2 * width)
        self.bottom = conv_bn_relu(2 * width, 4 * width)
        self.up2 = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)
        self.dec2 = conv_bn_relu(6 * width, 2 * width)
        self.up1 = nn.Upsample(scale_factor=2, mode="nearest")
        self.dec1 = nn.Sequential(
            nn.Conv2d(3 * width, width, 3, padding=1, bias=False),
            nn.BatchNorm2d(width))  # a BatchNorm with no ReLU after it in the Sequential
        self.head = nn.Conv2d(width, 1, 1)

    def forward(self, x):
        skip1 = self.enc1(x)
        skip2 = self.enc2(F.max_pool2d(skip1, 2))
        bottom = self.bottom(F.max_pool2d(skip2, 2))
        x = self.dec2(torch.cat([self.up2(bottom), skip2], dim=1))
        x = F.relu(self.dec1(torch.cat([self.up1(x), skip1], dim=1)))
        return self.head(x)


def make_model(width=8, channels_last=False, seed=0):
    torch.manual_seed(seed)
    model = UNet(width=width)
    return model.to(memory_format=torch.channels_last) if channels_last else model


def make_batches(count, batch=4, size=32, channels_last=False, seed=1):
    generator = torch.Generator().manual_seed(seed)
    layout = torch.channels_last if channels_last else torch.contiguous_format
    batches = []
    for _ in range(count):
        x = torch.randn(batch, 3, size, size, generator=generator)
        target = torch.randn(batch, 1, size, size, generator=generator)
        batches.append((x.contiguous(memory_format=layout), target))
    return batches


def make_optimizer(model):
    return torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)


def train(model, batches, optimizer=None):
    """SGD over the batches; returns the losses (floats)."""
    optimizer = optimizer or make_optimizer(model)
    model.train()
    losses = []
    for x, target in batches:
        optimizer.zero_grad()
        loss = F.mse_loss(model(x), target)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses


def gradients(model, x, target):
    model.zero_grad()
    F.mse_loss(model(x), target).backward()
    return {name: p.grad.clone() for name, p in model.named_parameters()}


def median_step_ms(model, batches, repeats):
    optimizer = torch.optim.SGD(model.parameters(), lr=0.01)
    times = []
    for step in range(repeats + 2):  # two warm-up steps
        x, target = batches[step % len(batches)]
        start = time.perf_counter()
        optimizer.zero_grad()
        F.mse_loss(model(x), target).backward()
        optimizer.step()
        if step >= 2:
            times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    import bpg_torch

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--steps", type=int, default=10, help="timed steps per model")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--size", type=int, default=64, help="image height and width")
    parser.add_argument("--width", type=int, default=16, help="channels of the first level")
    parser.add_argument("--channels-last", action="store_true")
    args = parser.parse_args()
    if args.size % 4 or args.steps < 1:
        parser.error("--size must be a multiple of 4 and --steps at least 1")

    plain = make_model(args.width, args.channels_last)
    converted = bpg_torch.convert(copy.deepcopy(plain))
    batches = make_batches(4, args.batch, args.size, args.channels_last)

    # Gradients of the same weights on the same batch, before any update.
    x, target = batches[0]
    grads_plain = gradients(plain, x, target)
    grads_bpg = gradients(converted, x, target)
    difference = max((grads_bpg[k] - g).abs().max().item() for k, g in grads_plain.items())
    largest = max(g.abs().max().item() for g in grads_plain.values())

    torch_ms = median_step_ms(plain, batches, args.steps)
    bpg_ms = median_step_ms(converted, batches, args.steps)
    layout = "channels_last" if args.channels_last else "NCHW"
    print(f"UNet width {args.width}, batch {args.batch}x3x{args.size}x{args.size} {layout}, "
          f"torch threads {torch.get_num_threads()}, bpg threads {bpg_torch.get_num_threads()}")
    print(f"training step, torch backward:     {torch_ms:8.2f} ms (median of {args.steps})")
    print(f"training step, bpg_torch.convert:  {bpg_ms:8.2f} ms (median of {args.steps})")
    print(f"speedup: {torch_ms / bpg_ms:.2f}x")
    print(f"max gradient difference: {difference:.3g} (largest gradient {largest:.3g})")


if __name__ == "__main__":
    main()
