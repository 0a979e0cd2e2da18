"""Caveat.key_point: a caveat may qualify a key point, still at most one part."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0021_review_conversation"),
    ]

    operations = [
        migrations.RemoveConstraint(
            model_name="caveat",
            name="caveat_one_target",
        ),
        migrations.AddField(
            model_name="caveat",
            name="key_point",
            field=models.ForeignKey(
                blank=True,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="caveats",
                to="summaries.keypoint",
            ),
        ),
        migrations.AddConstraint(
            model_name="caveat",
            constraint=models.CheckConstraint(
                condition=models.Q(
                    models.Q(("chapter__isnull", True), ("key_point__isnull", True)),
                    models.Q(("chapter__isnull", True), ("takeaway__isnull", True)),
                    models.Q(("key_point__isnull", True), ("takeaway__isnull", True)),
                    _connector="OR",
                ),
                name="caveat_one_target",
            ),
        ),
    ]
